// The ground network's store (ground_store.hpp).
#include "pg/ground_store.hpp"

#include <chrono>
#include <map>
#include <vector>

#include "pg/guard.hpp"

namespace mln::pg {
namespace {

using Clock = std::chrono::steady_clock;

// SQL that rebuilds int4[] argument lists from one parameter array per
// argument position ($first, $first+1, ...), unnested in step: `array` is
// the ARRAY[a0, ...] expression, `params` the "$first, ..." list for
// unnest(...) and `aliases` the "a0, ..." list for its AS t(...).  arity >= 1.
struct ArgColumnsSql {
  std::string array, params, aliases;
};

ArgColumnsSql arg_columns_sql(int arity, int first) {
  ArgColumnsSql a;
  for (int k = 0; k < arity; ++k) {
    const std::string sep = k ? ", " : "";
    a.aliases += sep + "a" + std::to_string(k);
    a.params += sep + "$" + std::to_string(first + k);
  }
  a.array = "ARRAY[" + a.aliases + "]";
  return a;
}

// Creates the clause chunks' table.  The clause chunks are stored
// uncompressed (STORAGE EXTERNAL): a row the raw pages cannot take inline
// (a clause of over 2,000 literals, or a table under wal_level = logical)
// is moved out of line, not compressed; pglz on megabytes of integers cost
// more than the whole rest of the store and saved little space.  Its
// primary key is added after the rows (one sorted index build instead of
// an insertion per row).
void create_clauses_table(Spi& spi, const std::string& s) {
  spi.exec("CREATE TABLE " + s +
           "._clauses (chunk int4 NOT NULL, offsets int4[] NOT NULL, lits int4[] NOT NULL, "
           "weights float8[] NOT NULL, wcode bytea NOT NULL)");  // format/clause_chunks.hpp
  spi.exec("ALTER TABLE " + s +
           "._clauses ALTER offsets SET STORAGE EXTERNAL, ALTER lits SET STORAGE EXTERNAL, "
           "ALTER weights SET STORAGE EXTERNAL, ALTER wcode SET STORAGE EXTERNAL");
}

}  // namespace

void create_network_tables(Spi& spi, const ProgramCtx& ctx) {
  const std::string s = qi(ctx.schema);
  // Drop the previous network, if any (quietly: no NOTICE for absent tables).
  // The result views the worker made read _map and _marginal: they go
  // first, by name, so that the CASCADE below reports only objects of the
  // user's that depended on the network.
  Rows views = spi.query(
      "SELECT string_agg(format('%I.%I', $1::text, c.relname), ', ') FROM pg_class c "
      "JOIN pg_namespace n ON n.oid = c.relnamespace "
      "WHERE n.nspname = $1 AND c.relkind = 'v' AND c.relname IN ('map_result', 'marginal_result')",
      {text_param(ctx.schema)});
  if (!views.isnull(0, 0)) spi.exec("DROP VIEW " + views.text(0, 0));
  Rows old = spi.query(
      "SELECT string_agg(format('%I.%I', $1::text, t), ', ') FROM unnest(ARRAY['_atoms', '_clauses', "
      "'_query_evidence', '_map', '_map_info', '_marginal_info', '_carried', '_marginal', '_learn_rules', '_learn_clauses', "
      "'_learn_world']) t "
      "WHERE to_regclass(format('%I.%I', $1::text, t)) IS NOT NULL",
      {text_param(ctx.schema)});
  if (!old.isnull(0, 0)) spi.exec("DROP TABLE " + old.text(0, 0) + " CASCADE");
  spi.exec("CREATE TABLE " + s +
           "._atoms (id int4 NOT NULL, pred int4 NOT NULL, args int4[] NOT NULL, evidence boolean, "
           "prior float8, is_query boolean NOT NULL)");
  create_clauses_table(spi, s);
  spi.exec("CREATE TABLE " + s + "._query_evidence (pred int4 NOT NULL, args int4[] NOT NULL)");
  spi.exec("CREATE TABLE " + s + "._map (atom int4 PRIMARY KEY, truth boolean NOT NULL)");
  // The cost and bound of the MAP answer in _map (the worker writes both):
  // what a live re-grounding carries to the next job (live_ground.hpp).
  spi.exec("CREATE TABLE " + s + "._map_info (job int8 NOT NULL, cost float8 NOT NULL, bound float8, optimal boolean)");
  spi.exec("CREATE TABLE " + s + "._marginal_info (job int8 NOT NULL)");  // the job whose marginals _marginal holds
}

void ClauseStream::add(const int64_t* offsets, const int32_t* lits, const double* weights, size_t first, size_t last) {
  const auto t0 = Clock::now();
  if (!held && propagate && ground::may_start_forcing(offsets, weights, first, last)) {
    held = true;
    held_at = first;
  }
  if (!held && last > first) {
    if (!writer) writer = std::make_unique<ClauseChunkWriter>(table);
    writer->add(offsets, lits, weights, first, last);
    stored = last;
  }
  seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  check_interrupts();
}

void ClauseStream::finish(Spi& spi, const std::string& schema, const ground::GroundOutput& out) {
  const auto t0 = Clock::now();
  if (stored > 0 && out.unit_propagation.rewrote()) {
    writer->finish();
    writer.reset();
    spi.exec("DROP TABLE " + table);
    create_clauses_table(spi, schema);
    stored = 0;
    rewritten = true;
  }
  const ClauseSet& cs = out.network.clauses;
  if (!writer) writer = std::make_unique<ClauseChunkWriter>(table);
  writer->add(cs.offsets.data(), cs.lits.data(), cs.weights.data(), stored, cs.size());
  writer->finish();
  seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

StoreTimes store_network(Spi& spi, const ProgramCtx& ctx, const ground::GroundOutput& out, ClauseStream& clauses) {
  StoreTimes tm;
  auto lap = [last = Clock::now()](double& into) mutable {
    auto now = Clock::now();
    into = std::chrono::duration<double>(now - last).count();
    last = now;
  };
  const std::string s = qi(ctx.schema);
  // Atoms, with table_multi_insert straight from the grounder's output.
  append_atoms(s + "._atoms", out.atoms.size(), [&out](size_t i) {
    const auto& a = out.atoms[i];
    return AtomRow{static_cast<int32_t>(i + 1), a.pred, a.args.data(), static_cast<int>(a.args.size()),
                   a.evidence, a.prior, a.is_query};
  });
  lap(tm.atoms);

  // Clauses in chunks of a page-long row each, written as raw pages: an
  // INSERT per 65,536 clauses stored each chunk's arrays as TOAST rows,
  // 2 kB with an index entry and a WAL record each, 8.5 s for 10^8
  // clauses on one thread.  Those consolidated before are in already.
  clauses.finish(spi, s, out);
  lap(tm.clauses);
  tm.clauses = clauses.seconds;  // with the part written during the consolidation

  // True query evidence: one INSERT per predicate (arguments as column arrays).
  std::map<int32_t, std::vector<std::vector<int32_t>>> qe;  // pred -> argument columns
  for (const auto& [pred, args] : out.true_query_evidence) {
    auto& cols = qe[pred];
    cols.resize(args.size());
    for (size_t k = 0; k < args.size(); ++k) cols[k].push_back(args[k]);
  }
  for (const auto& [pred, cols] : qe) {
    check_interrupts();
    if (cols.empty()) {  // zero-arity predicate: at most one atom
      spi.exec("INSERT INTO " + s + "._query_evidence VALUES ($1, '{}')", {int4_param(pred)});
      continue;
    }
    std::vector<Param> params{int4_param(pred)};
    for (const auto& col : cols) params.push_back(int4_array_param(col));
    const ArgColumnsSql ac = arg_columns_sql(static_cast<int>(cols.size()), 2);
    spi.exec("INSERT INTO " + s + "._query_evidence SELECT $1, " + ac.array + " FROM unnest(" + ac.params +
                 ") AS t(" + ac.aliases + ")",
             params);
  }
  lap(tm.query_evidence);
  // _atoms gets no index: it is written in id order (ids 1..n), and the
  // worker and the readable functions read it whole, with hash joins.  Its
  // primary key cost 40 ms of the 300 ms of grounding smokers at 10^5 on
  // the GPU path and served no reader.  A user who looks atoms up by id can
  // add one.  The clause chunks keep theirs (a few rows).
  spi.exec("ALTER TABLE " + s + "._clauses ADD PRIMARY KEY (chunk)");
  lap(tm.keys);
  return tm;
}

}  // namespace mln::pg
