// The checks of trusted.hpp: the tables locked in one statement, then one
// catalog query for them all (a job's fixed cost is its round trips).
#include "worker/trusted.hpp"

#include "worker/job.hpp"

namespace mln::worker {

namespace {

// One row per table of $2: what about it would let a role's code run.
// Built-in types, operators and casts have OIDs below FirstNormalObjectId
// (16384).
constexpr const char* kCheckSql = R"SQL(
SELECT c.relname::text, c.relkind::text,
       c.relowner = p.owner::oid OR c.relowner = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user),
       c.relrowsecurity OR c.relforcerowsecurity, c.relhasrules, c.relhastriggers, c.relhassubclass OR c.relispartition,
       EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0
                AND NOT a.attisdropped AND (a.atttypid >= 16384 OR a.atthasdef OR a.attgenerated <> '')),
       EXISTS (SELECT 1 FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid
                AND (i.indexprs IS NOT NULL OR i.indpred IS NOT NULL)),
       EXISTS (SELECT 1 FROM pg_catalog.pg_constraint k WHERE k.conrelid = c.oid AND k.contype NOT IN ('p', 'u'))
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  JOIN mln.programs p ON p.name = $3
 WHERE n.nspname = $1 AND c.relname = ANY($2::text[])
)SQL";

}  // namespace

void check_trusted_tables(Conn& c, const std::string& program, const std::string& schema,
                          const std::vector<std::string>& tables, bool write) {
  if (tables.empty()) return;
  const std::string s = c.quote_ident(schema);
  std::string list;
  for (const std::string& t : tables) list += (list.empty() ? "" : ", ") + s + "." + c.quote_ident(t);
  c.exec("LOCK TABLE " + list + (write ? " IN ACCESS EXCLUSIVE MODE" : " IN ACCESS SHARE MODE"));
  Result r = c.exec(kCheckSql, {schema, pg_array(tables), program});
  for (const std::string& t : tables) {
    const std::string name = schema + "." + t;
    auto refuse = [&](const std::string& why) {
      throw DbError("refused to " + std::string(write ? "write " : "read ") + name + ": " + why +
                    " (the worker reads and writes only the plain tables pg_mln made; ground the program again)");
    };
    int row = -1;
    for (int i = 0; i < r.rows(); ++i)
      if (r.get(i, 0) == t) row = i;
    if (row < 0) refuse("it is not a relation of program \"" + program + "\"");
    auto yes = [&](int col) { return r.get(row, col + 1) == "t"; };
    if (r.get(row, 1) != "r") refuse("it is not an ordinary table (relkind '" + r.get(row, 1) + "')");
    if (!yes(1)) refuse("it is owned by neither the program's owner nor the worker");
    if (yes(2)) refuse("it has row-level security");
    if (yes(3)) refuse("it has rules");
    if (yes(4)) refuse("it has triggers");
    if (yes(5)) refuse("it has child tables or is a partition");
    if (yes(6)) refuse("a column has a type that is not built in, a default or is generated");
    if (yes(7)) refuse("it has an index on an expression or a partial index");
    if (yes(8)) refuse("it has a constraint other than a primary key or a unique one");
  }
}

}  // namespace mln::worker
