// Maintained Datalog outputs (docs/datalog.md, "Maintained outputs"):
// mln.datalog(program, schema, '{"maintain": true}') registers the program
// in mln.datalog_maintained and puts statement-level triggers with
// transition tables on its input tables (mln._datalog_maintain, SQL); each
// statement that changes an input then runs mln._datalog_changed, which
// applies the statement's rows to the target schema's tables in the same
// transaction (DRed on the operator engine: ground/datalog_maintain.hpp).
//
// Rights: the triggers fire in the writer's session, and the program runs
// as its owner, the way REFRESH MATERIALIZED VIEW runs a view's query
// (SetUserIdAndSecContext with SECURITY_RESTRICTED_OPERATION): it reads
// what the owner may read and writes the owner's tables.  The owner comes
// from the catalog row (mln._datalog_owner, which answers only for a table
// the row lists), never from the trigger's arguments.
//
// State: each backend keeps the last state it computed per target schema,
// tagged with the version it wrote to the catalog row (a sequence value,
// never reused, so a rolled-back change leaves a tag no row holds).  A
// statement whose row holds another version (another session changed the
// inputs, or a rollback) evaluates the program again and rewrites the
// tables; TRUNCATE does the same.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ground/datalog_maintain.hpp"
#include "options/options.hpp"
#include "pg/datalog_run.hpp"
#include "pg/engine.hpp"
#include "pg/guard.hpp"
#include "pg/spi.hpp"

extern "C" {
#include "commands/trigger.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "access/xact.h"
PG_FUNCTION_INFO_V1(mln_datalog_changed);
}

namespace mln::pg {

namespace dl = lang::datalog;
namespace ev = ground::datalog;

namespace {

const char* const kNewRows = "pg_mln_new_rows";
const char* const kOldRows = "pg_mln_old_rows";

struct State {
  int64_t version = -1;
  std::string device;
  std::unique_ptr<DatalogResult> res;  // the program (inputs resolved), its symbols
  std::vector<gpu::Relation> rels;     // every relation's rows on the engine
};
std::map<std::string, State>& states() {
  static auto* m = new std::map<std::string, State>();  // never destroyed: a backend's lifetime
  return *m;
}

// The k-th input relation of `p` reads the table `oids[k]` now (a renamed
// table is followed; a dropped one is an error naming it).
void point_inputs(Spi& spi, dl::Program& p, const std::vector<int32_t>& oids, const std::string& target) {
  size_t k = 0;
  for (dl::Relation& rel : p.rels) {
    if (!rel.input) continue;
    if (k >= oids.size())
      throw UserError{ERRCODE_DATA_CORRUPTED,
                      "mln.datalog_maintained: the inputs of \"" + target + "\" do not match its program", "",
                      "mln.datalog_stop('" + target + "'), then mln.datalog(..., '{\"maintain\": true}') again"};
    Rows r = spi.query("SELECT n.nspname::text, c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = "
                       "c.relnamespace WHERE c.oid = $1::oid",
                       {int8_param(static_cast<uint32_t>(oids[k++]))});
    if (r.size() == 0)
      throw UserError{ERRCODE_UNDEFINED_TABLE, "an input table of the maintained Datalog program of \"" + target +
                          "\" was dropped (relation \"" + rel.name + "\")",
                      "", "mln.datalog_stop('" + target + "') stops maintaining it"};
    rel.source.schema = r.text(0, 0);
    rel.source.table = r.text(0, 1);
  }
}

// The derived relations' rows written to the target's tables (each table
// emptied and filled: a first state, or one evaluated again), from the
// evaluation's host copies, which are then let go.
void rewrite(Spi& spi, const std::string& target, DatalogResult& res) {
  for (size_t r = 0; r < res.prog.rels.size(); ++r) {
    const dl::Relation& rel = res.prog.rels[r];
    if (!rel.derived) continue;
    const std::string table = qualified(target, rel.name);
    spi.exec("DELETE FROM " + table);
    write_rows(spi, table, rel, res.rows[r], res.syms, true);
    res.rows[r] = gpu::HostTable();
  }
}

// The state of `target` evaluated from its inputs as they are now.
// (run_datalog with maintain keeps every relation on the engine.)
State evaluate_now(Spi& spi, const std::string& target, const std::string& program, DatalogOptions opts,
                   const std::vector<int32_t>& oids) {
  State st;
  st.device = opts.device;
  dl::Program p = dl::parse(program);
  point_inputs(spi, p, oids, target);
  st.res = std::make_unique<DatalogResult>();
  opts.maintain = true;
  run_datalog(spi, std::move(p), opts, *st.res);
  st.rels = std::move(st.res->rels);
  return st;
}

// The deleted rows (old rows of a DELETE or UPDATE) that the table holds no
// more: a table is a bag, its relation a set, and deleting one of two equal
// rows leaves the fact.
std::string gone_rows(const dl::Relation& rel) {
  std::string match;
  for (int c = 0; c < rel.arity; ++c) {
    const std::string col = qi(rel.source.columns[static_cast<size_t>(c)]);
    match += (c ? " AND " : "") + std::string("t.") + col + " = o." + col;
  }
  return std::string("(SELECT * FROM ") + kOldRows + " o WHERE NOT EXISTS (SELECT 1 FROM " +
         qualified(rel.source.schema, rel.source.table) + " t WHERE " + match + ")) gone";
}

struct Change {
  bool truncate = false, has_new = false, has_old = false;
  Oid relid = InvalidOid;
};

void changed(TriggerData* td, const std::string& target, const Change& ch) {
  Spi spi;
  pg_call([&] {
    if (SPI_register_trigger_data(td) != SPI_OK_TD_REGISTER) elog(ERROR, "SPI_register_trigger_data failed");
  });
  // The owner, only for a table the row lists (SECURITY DEFINER: the row is
  // the owner's, which row-level security hides from the writer).
  Rows o = spi.query("SELECT mln._datalog_owner($1, $2::oid)::oid",
                     {text_param(target), int8_param(static_cast<int64_t>(ch.relid))});
  if (o.size() == 0 || o.isnull(0, 0))
    throw UserError{ERRCODE_INSUFFICIENT_PRIVILEGE,
                    "mln._datalog_changed: \"" + target + "\" maintains no Datalog program reading this table", "",
                    "the trigger names a target schema whose program does not read this table: drop the trigger"};
  const Oid owner = static_cast<Oid>(o.int8(0, 0));
  Oid save_user = InvalidOid;
  int save_sec = 0;
  pg_call([&] {
    GetUserIdAndSecContext(&save_user, &save_sec);
    SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
  });
  // (An error leaves through the transaction's abort, which restores the
  // user; a normal return restores it below.)
  // The row, locked: one statement at a time maintains a target (another
  // session's waits here, then finds a version this backend did not write).
  // Its options were checked when it was registered.
  Rows row = spi.query("SELECT program, inputs::int4[], version, coalesce(options->>'device', ''), "
                       "coalesce((options->>'max_rows')::bigint, $2) FROM mln.datalog_maintained "
                       "WHERE target_schema = $1 FOR UPDATE",
                       {text_param(target),
                        int8_param(options::default_integer(options::Id::kMaxRows, options::kDatalog))});
  if (row.size() == 0)
    throw UserError{ERRCODE_UNDEFINED_OBJECT, "mln.datalog_maintained has no row for \"" + target + "\"", "", ""};
  const std::string program = row.text(0, 0);
  const std::vector<int32_t> oids = row.int4_array(0, 1);
  const int64_t version = row.int8(0, 2);
  // What this statement wrote, and (read committed) what the session whose
  // turn came before committed: a snapshot taken now, as SPI takes one per
  // statement (the heap reader reads the active snapshot, which is still
  // the writing statement's).
  pg_call([] {
    CommandCounterIncrement();
    PushActiveSnapshot(GetTransactionSnapshot());
    UpdateActiveSnapshotCommandId();
  });
  DatalogOptions run;
  run.device = row.text(0, 3);
  run.max_rows = static_cast<uint64_t>(row.int8(0, 4));
  State& st = states()[target];
  const auto t0 = std::chrono::steady_clock::now();
  const char* how = "maintained";
  std::string detail;
  if (ch.truncate || st.version != version || !st.res) {
    st = evaluate_now(spi, target, program, run, oids);
    rewrite(spi, target, *st.res);
    how = "evaluated again";
  } else {
    gpu::Engine& eng = engine_for(st.device);
    dl::Program& p = st.res->prog;
    point_inputs(spi, p, oids, target);  // (names only: a rename between statements)
    std::vector<ev::RelationChange> in(p.rels.size());
    size_t k = 0;  // the input relations in order, each reading table oids[k]
    for (size_t r = 0; r < p.rels.size(); ++r) {
      const dl::Relation& rel = p.rels[r];
      if (!rel.input || static_cast<Oid>(oids[k++]) != ch.relid) continue;
      if (ch.has_new) in[r].ins = eng.upload(read_rows(spi, rel, kNewRows, st.res->syms));
      if (ch.has_old) in[r].del = eng.upload(read_rows(spi, rel, gone_rows(rel), st.res->syms));
    }
    ev::EvalOptions eo;
    eo.max_rows = run.max_rows;
    eo.progress = [](int, int, uint64_t) { check_interrupts(); };
    ev::MaintainStats ms;
    const auto m0 = std::chrono::steady_clock::now();
    const std::vector<ev::RelationChange> out = ev::maintain(eng, p, st.rels, in, eo, &ms);
    const double maintain_ms = 1000 * std::chrono::duration<double>(std::chrono::steady_clock::now() - m0).count();
    uint64_t gained = 0, lost = 0;
    for (size_t r = 0; r < p.rels.size(); ++r) {
      if (!p.rels[r].derived) continue;
      for (const bool insert : {false, true}) {
        const gpu::Relation& rows = insert ? out[r].ins : out[r].del;
        if (!rows.impl()) continue;
        (insert ? gained : lost) += rows.rows();
        write_rows(spi, qualified(target, p.rels[r].name), p.rels[r], eng.download(rows), st.res->syms, insert);
      }
    }
    detail = " (" + std::to_string(gained) + " rows gained, " + std::to_string(lost) + " lost; " +
             std::to_string(ms.over_deleted) + " over-deleted, " + std::to_string(ms.rederived) + " re-derived; " +
             std::to_string(ms.strata_evaluated) + " of " + std::to_string(ms.strata_changed) +
             " changed strata evaluated again; the engine " + std::to_string(static_cast<int>(maintain_ms)) + " ms)";
  }
  st.version = spi.query("UPDATE mln.datalog_maintained SET version = nextval('mln.datalog_version'), "
                         "changed_at = now() WHERE target_schema = $1 RETURNING version",
                         {text_param(target)})
                   .int8(0, 0);
  const double ms = 1000 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  pg_call([&] {
    elog(DEBUG1, "pg_mln: datalog outputs of \"%s\" %s in %.2f ms%s", target.c_str(), how, ms, detail.c_str());
    PopActiveSnapshot();
    SetUserIdAndSecContext(save_user, save_sec);
  });
}

}  // namespace

}  // namespace mln::pg

using namespace mln::pg;

// mln._datalog_changed() returns trigger: AFTER INSERT, UPDATE, DELETE or
// TRUNCATE FOR EACH STATEMENT, argument: the target schema; the transition
// tables pg_mln_new_rows and pg_mln_old_rows where the event has them.
Datum mln_datalog_changed(PG_FUNCTION_ARGS) {
  if (!CALLED_AS_TRIGGER(fcinfo)) ereport(ERROR, (errmsg("mln._datalog_changed: not called as a trigger")));
  TriggerData* td = reinterpret_cast<TriggerData*>(fcinfo->context);
  if (!TRIGGER_FIRED_AFTER(td->tg_event) || !TRIGGER_FIRED_FOR_STATEMENT(td->tg_event) || td->tg_trigger->tgnargs != 1)
    ereport(ERROR, (errmsg("mln._datalog_changed: an AFTER ... FOR EACH STATEMENT trigger with one argument")));
  Change ch;
  ch.relid = RelationGetRelid(td->tg_relation);
  ch.truncate = TRIGGER_FIRED_BY_TRUNCATE(td->tg_event);
  ch.has_new = td->tg_newtable != nullptr;
  ch.has_old = td->tg_oldtable != nullptr;
  const std::string target = td->tg_trigger->tgargs[0];
  MLN_GUARDED({ changed(td, target, ch); });
  return PointerGetDatum(nullptr);
}
