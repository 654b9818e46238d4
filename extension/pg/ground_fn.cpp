// mln.ground(name, device): reads the program's evidence into columnar
// buffers, runs the grounder on the chosen engine, and stores the ground
// network in the program's schema (_atoms, _clauses, _query_evidence).
#include "pg/guard.hpp"
#include "pg/heap_io.hpp"
#include "pg/args.hpp"
#include "pg/engine.hpp"
#include "pg/ground_store.hpp"
#include "pg/json.hpp"
#include "pg/carry.hpp"
#include "pg/live_ground.hpp"
#include "pg/program_ctx.hpp"
#include "pg/spi.hpp"
#include "pg/sql_ground.hpp"

#include <chrono>
#include <malloc.h>
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ground/grounder.hpp"
#include "ground/proc_memory.hpp"

extern "C" {
#include "fmgr.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
PG_FUNCTION_INFO_V1(mln_ground);
PG_FUNCTION_INFO_V1(mln_ground_learning);
}

namespace mln::pg {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kClauseChunk = 65536;  // clauses per _learn_clauses row

// Reads one predicate's evidence (own table or bound relation) into `ev`.
void read_evidence(Spi& spi, const ProgramCtx& ctx, int p, SymbolTable& syms, ground::PredEvidence& ev) {
  const auto& d = ctx.prog.preds[p];
  const Binding& b = ctx.bindings[p];
  ev.args.assign(d.arity(), {});
  if (!b.bound) {  // the program's own table: (arguments..., truth, prior), scanned directly
    scan_evidence(qualified(ctx.schema, d.name), d.arg_names, ev.args, ev.truth, ev.prior);
    return;
  }
  // A bound relation: its columns are read as text and mapped to symbols.
  std::string sql = "SELECT ";
  for (int k = 0; k < d.arity(); ++k) sql += qi(b.columns[k]) + "::text, ";
  sql += b.truth_column.empty() ? "true" : qi(b.truth_column) + "::boolean";
  sql += " FROM " + b.relation;
  Rows r = spi.query(sql);
  for (size_t i = 0; i < r.size(); ++i) {
    bool skip = r.isnull(i, d.arity());
    for (int k = 0; k < d.arity(); ++k) skip |= r.isnull(i, k);
    if (skip) continue;  // NULL arguments or truth: not evidence
    for (int k = 0; k < d.arity(); ++k) {
      std::string v = r.text(i, k);
      ev.args[k].push_back(d.arg_kinds[k] == lang::TypeKind::Int ? parse_int_arg(v, d.name, 0) : syms.intern(v));
    }
    ev.truth.push_back(r.boolean(i, d.arity()) ? 1 : 0);
    ev.prior.push_back(std::nan(""));
    if (i % 65536 == 0) check_interrupts();
  }
}

// Symbol id of a constant term at argument k of predicate d.
int32_t const_id(const lang::PredicateDecl& d, int k, const lang::Term& t, SymbolTable& syms) {
  if (d.arg_kinds[k] == lang::TypeKind::Int) return parse_int_arg(t.text, d.name, 0);
  return syms.intern(t.text);
}

// Sorts symbol ids and drops repeats.  Ids are small positive integers
// (positions in _symbols), so a bitmap over [min, max] does it in two linear
// passes where it is not much larger than the list (smokers at 10^5: 660,000
// ids, 25 ms sorted, 2 ms marked); other lists are sorted.
void sort_unique(std::vector<int32_t>& ids) {
  if (ids.empty()) return;
  const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
  const int64_t min = *lo, span = static_cast<int64_t>(*hi) - min + 1;
  if (span <= 4 * static_cast<int64_t>(ids.size()) + (int64_t{1} << 20)) {
    std::vector<uint8_t> seen(static_cast<size_t>(span), 0);
    for (int32_t v : ids) seen[static_cast<size_t>(v - min)] = 1;
    ids.clear();
    for (int64_t i = 0; i < span; ++i)
      if (seen[static_cast<size_t>(i)]) ids.push_back(static_cast<int32_t>(min + i));
    return;
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

// Builds the grounder's input from the database.
ground::GroundInput build_input(Spi& spi, const ProgramCtx& ctx, SymbolTable& syms) {
  ground::GroundInput in;
  in.program = &ctx.prog;
  const auto& prog = ctx.prog;
  // Constants per type; sorted and made unique at the end (a std::set per
  // type cost ~0.1 s for the 660,000 evidence arguments of smokers at 10^5).
  std::map<std::string, std::vector<int32_t>> domains;
  auto note_lit = [&](const lang::Literal& l) {
    const auto& d = prog.preds[l.pred];
    for (size_t k = 0; k < l.args.size(); ++k)
      if (!l.args[k].is_var() && d.arg_kinds[k] == lang::TypeKind::Symbol)
        domains[d.arg_types[k]].push_back(syms.intern(l.args[k].text));
  };
  for (const auto& c : prog.clauses)
    for (const auto& l : c.lits) note_lit(l);
  for (const auto& r : prog.rules) {
    note_lit(r.head);
    for (const auto& l : r.body) note_lit(l);
  }
  // Queries.
  if (ctx.query.empty())
    throw UserError{ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, "program \"" + ctx.name + "\" has no query", "",
                    "set one with mln.set_query(name, query), e.g. mln.set_query('" + ctx.name + "', 'Cancer(x)')"};
  for (const auto& q : lang::parse_queries(prog, ctx.query)) {
    const auto& d = prog.preds[q.pred];
    ground::QueryPattern qp;
    qp.pred = q.pred;
    std::map<std::string, int32_t> vars;
    for (int k = 0; k < d.arity(); ++k) {
      if (q.args.empty() || q.args[k].is_var()) {
        std::string v = q.args.empty() ? "_" + std::to_string(k) : q.args[k].text;
        auto it = vars.find(v);
        int32_t id = it != vars.end() ? it->second : -static_cast<int32_t>(vars.size() + 1);
        vars.emplace(v, id);
        qp.args.push_back(id);
      } else {
        int32_t id = const_id(d, k, q.args[k], syms);
        if (d.arg_kinds[k] == lang::TypeKind::Symbol) domains[d.arg_types[k]].push_back(id);
        qp.args.push_back(id);
      }
    }
    in.queries.push_back(std::move(qp));
  }
  // Evidence.
  in.evidence.resize(prog.preds.size());
  for (size_t p = 0; p < prog.preds.size(); ++p) {
    check_interrupts();
    read_evidence(spi, ctx, static_cast<int>(p), syms, in.evidence[p]);
    const auto& d = prog.preds[p];
    for (int k = 0; k < d.arity(); ++k)
      if (d.arg_kinds[k] == lang::TypeKind::Symbol)
        domains[d.arg_types[k]].insert(domains[d.arg_types[k]].end(), in.evidence[p].args[k].begin(),
                                       in.evidence[p].args[k].end());
  }
  // Symbols on demand (SymbolTable::open): the grounder asks for a few.
  in.symbols.lookup = [&syms](const std::string& s) { return syms.find(s); };
  in.symbols.load_names = [&syms] { return syms.all_names(); };
  for (auto& [type, ids] : domains) {
    sort_unique(ids);
    in.type_domains.emplace_back(type, std::move(ids));
  }
  return in;
}

// Learning: the learnable first-order clauses (_learn_rules: their index
// and weight at grounding), each ground clause's weight that is not learned
// and its origins (_learn_clauses, chunked like _clauses; an origin is
// +-(position in _learn_rules + 1)), and the training world's true atoms
// (_learn_world).  Raises when there is nothing to learn or no training data.
void store_learning(Spi& spi, const ProgramCtx& ctx, const ground::GroundOutput& out) {
  const std::string s = qi(ctx.schema);
  std::vector<int32_t> pos_of(ctx.prog.clauses.size(), -1), rules;
  for (int32_t o : out.origins) {
    const int32_t idx = (o > 0 ? o : -o) - 1;
    if (pos_of[idx] < 0) pos_of[idx] = 0;
  }
  std::vector<double> rule_w;
  for (size_t i = 0; i < pos_of.size(); ++i)
    if (pos_of[i] == 0) pos_of[i] = static_cast<int32_t>(rules.size()), rules.push_back(static_cast<int32_t>(i)),
                        rule_w.push_back(ctx.prog.clauses[i].weight);
  if (rules.empty()) {
    bool any_soft = false;
    for (const auto& c : ctx.prog.clauses) any_soft |= ground::learnable_clause(c);
    throw UserError{ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                    "program \"" + ctx.name + "\" has nothing to learn", 
                    any_soft ? "no soft clause has a grounding that involves a query atom"
                             : "every clause is hard, fixed ('@') or has an embedded weight",
                    "learning changes the weights of soft clauses over the query predicates"};
  }
  size_t true_atoms = 0;
  for (uint8_t t : out.training_truth) true_atoms += t;
  if (true_atoms == 0)
    throw UserError{ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                    "program \"" + ctx.name + "\" has no training data",
                    "no query atom is true in the evidence (the evidence of the query predicates is the training world)",
                    "load evidence for the query predicates (mln.load_evidence or mln.bind_predicate)"};
  spi.exec("CREATE TABLE " + s + "._learn_rules (pos int4 NOT NULL, idx int4 NOT NULL, weight float8 NOT NULL)");
  spi.exec("INSERT INTO " + s + "._learn_rules SELECT o - 1, i, w FROM unnest($1::int4[], $2::float8[]) "
           "WITH ORDINALITY AS t(i, w, o)",
           {int4_array_param(rules), float8_array_param(rule_w)});
  spi.exec("CREATE TABLE " + s + "._learn_clauses (chunk int4 PRIMARY KEY, base float8[] NOT NULL, "
           "origin_offsets int4[] NOT NULL, origins int4[] NOT NULL)");
  const ClauseSet& cs = out.network.clauses;
  StatementMemory cc;
  for (size_t c0 = 0, chunk = 0; c0 < cs.size(); c0 += kClauseChunk, ++chunk) {
    check_interrupts();
    const size_t c1 = std::min(cs.size(), c0 + kClauseChunk);
    std::vector<double> base(c1 - c0);
    std::vector<int32_t> offs{0}, orig;
    for (size_t c = c0; c < c1; ++c) {
      double w = cs.weights[c];
      for (int64_t i = out.origin_off[c]; i < out.origin_off[c + 1]; ++i) {
        const int32_t o = out.origins[i], idx = (o > 0 ? o : -o) - 1;
        w -= (o > 0 ? 1.0 : -1.0) * ctx.prog.clauses[idx].weight;
        orig.push_back((o > 0 ? 1 : -1) * (pos_of[idx] + 1));
      }
      base[c - c0] = w;
      offs.push_back(static_cast<int32_t>(orig.size()));
    }
    cc.chunk([&] {
      spi.exec("INSERT INTO " + s + "._learn_clauses VALUES ($1, $2, $3, $4)",
               {int4_param(static_cast<int32_t>(chunk)), float8_array_param(base), int4_array_param(offs),
                int4_array_param(orig)});
    });
  }
  std::vector<int32_t> truth_ids;
  for (size_t a = 1; a < out.training_truth.size(); ++a)
    if (out.training_truth[a]) truth_ids.push_back(static_cast<int32_t>(a));
  spi.exec("CREATE TABLE " + s + "._learn_world (atom int4 PRIMARY KEY)");
  spi.exec("INSERT INTO " + s + "._learn_world SELECT unnest($1::int4[])", {int4_array_param(truth_ids)});
}

// The statistics returned to the caller and kept in mln.programs.
// engine_peak: the operator engine's working memory at its peak (none on the SQL path);
// mem: the backend's memory after each phase.
std::string stats_json(const ground::GroundOutput& out, const std::string& device, double load_s, double store_s,
                       const StoreTimes& st, double total_s, const size_t* engine_peak, const ground::MemoryLog& mem) {
  std::string o = "{\"atoms\": " + std::to_string(out.atoms.size()) +
                  ", \"clauses\": " + std::to_string(out.network.clauses.size()) +
                  ", \"device\": " + json_quote(device) +
                  ", \"relevant_clauses\": " + std::to_string(out.relevant_clauses.size()) +
                  ", \"closure_rounds\": " + std::to_string(out.closure_rounds) + ", \"seconds\": {\"load\": " +
                  json_num(load_s);
  for (const auto& ph : out.phases) o += ", " + json_quote(ph.phase) + ": " + json_num(ph.seconds);
  o += ", \"store\": " + json_num(store_s) + ", \"total\": " + json_num(total_s) + "}";
  o += ", \"store_parts\": {\"tables\": " + json_num(st.tables) + ", \"atoms\": " + json_num(st.atoms) +
       ", \"clauses\": " + json_num(st.clauses) + ", \"query_evidence\": " + json_num(st.query_evidence) +
       ", \"keys\": " + json_num(st.keys) + "}";
  o += ", \"memory\": " + mem.json(engine_peak);
  const ground::UnitPropStats& up = out.unit_propagation;
  if (up.ran)
    o += ", \"unit_propagation\": {\"enabled\": true, \"atoms_fixed\": " + std::to_string(up.atoms_fixed) +
         ", \"clauses_before\": " + std::to_string(up.clauses_before) +
         ", \"clauses_removed\": " + std::to_string(up.clauses_removed) +
         ", \"clauses_shortened\": " + std::to_string(up.clauses_shortened) +
         ", \"constant_cost\": " + json_num(up.constant_cost) +
         ", \"hard_conflict\": " + (up.hard_conflict ? "true" : "false") + "}";
  else
    o += ", \"unit_propagation\": {\"enabled\": false}";
  o += "}";
  return o;
}


// What a grounding read, for the staleness of its network (SQL 0.14.0's
// mln._begin_ground and mln._end_ground; a database at an earlier version
// has neither).  Begun before anything is read, so that every change the
// grounding does not see is logged.
struct SourceRecord {
  bool on = false;
  std::string snapshot;
  void begin(Spi& spi, const std::string& name) {
    on = spi.query("SELECT to_regprocedure('mln._begin_ground(text)') IS NOT NULL").boolean(0, 0);
    if (on) snapshot = spi.query("SELECT mln._begin_ground($1)", {text_param(name)}).text(0, 0);
  }
  void end(Spi& spi, const std::string& name, const std::string& device, bool activate_all,
           const std::vector<std::string>& cw) {
    if (!on) return;
    const std::string args = "{\"device\": " + json_quote(device) + ", \"activate_all\": " +
                             (activate_all ? "true" : "false") + ", \"closed_world\": " + json_str_array(cw) + "}";
    spi.exec("SELECT mln._end_ground($1, $2, $3)", {text_param(name), text_param(snapshot), jsonb_param(args)});
  }
};

}  // namespace
}  // namespace mln::pg

using namespace mln::pg;

namespace {

// Grounds program `name` and stores the network (and, when learning, the
// tables of store_learning); returns the statistics (palloc'd in SPI's
// caller context).
char* ground_program(const std::string& name, const std::string& device, bool activate_all,
                     const std::vector<std::string>& cw, bool learning) {
  auto t0 = Clock::now();
  const bool sql_path = device == "sql";  // plain SQL through SPI (sql_ground.cpp)
  if (learning && sql_path)
    throw UserError{ERRCODE_FEATURE_NOT_SUPPORTED, "learning grounds on the operator engine (device cpu, gpu or auto), not on device sql", "", ""};
  // Arrays of 1 MB and more are mapped on their own and unmapped when freed
  // (glibc's threshold, fixed for this backend): under the default sliding
  // threshold the engine's freed arrays stayed in the heap, resident, and
  // raised the peak by what earlier plans had freed (docs/grounding.md, "Memory").
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mln::gpu::Engine* eng = sql_path ? nullptr : &engine_for(device);
  if (eng) eng->reset_peak_memory();
  Spi spi;
  SourceRecord sources;
  sources.begin(spi, name);
  ProgramCtx ctx = load_program(spi, name);
  SymbolTable syms;
  // Evidence bound to a user's table is read as text and interned row by
  // row: that needs the whole dictionary.  Otherwise symbols are looked
  // up on demand.
  const bool bound = std::any_of(ctx.bindings.begin(), ctx.bindings.end(), [](const Binding& b) { return b.bound; });
  if (bound) syms.load(spi, ctx.schema);
  else syms.open(spi, ctx.schema);
  mln::ground::GroundInput in = build_input(spi, ctx, syms);
  syms.flush();
  mln::ground::GroundOptions opts;
  opts.activate_all = activate_all;
  opts.learning = learning;
  opts.unit_propagate = guc_unit_propagation;
  for (const auto& p : cw) {
    int idx = ctx.prog.find_pred(p);
    if (idx < 0)
      throw UserError{ERRCODE_UNDEFINED_OBJECT, "closed_world: predicate \"" + p + "\" is not declared", "", ""};
    opts.extra_closed_world.push_back(idx);
  }
  // The stored network's MAP answer goes to the new one (carry.hpp): read
  // before its tables go, with the network itself unless a live update
  // will say what it touched.
  StoredAnswer previous;
  StoredNetwork before;
  auto t_carry = Clock::now();
  if (!learning) {
    const bool ready = !sql_path && live_state_ready(spi, ctx, in, opts);
    const int64_t stored = stored_clauses(spi, name);
    const bool compare = !ready && stored >= 0 && stored <= kMaxDiffClauses;
    previous = read_stored_answer(spi, ctx.schema, !ready && !compare);
    if (previous.have() && compare) before = read_stored_network(spi, ctx.schema);
  }
  double carry_s = std::chrono::duration<double>(Clock::now() - t_carry).count();
  auto t1 = Clock::now();
  create_network_tables(spi, ctx);
  const double tables_s = std::chrono::duration<double>(Clock::now() - t1).count();
  // Cancel is honoured between operator steps; progress goes out as a
  // NOTICE at most once a second.
  mln::ground::MemoryLog mem;
  mem.note("load");
  auto last_notice = Clock::now();
  opts.progress = [&last_notice, &mem](const std::string& phase, double fraction) {
    if (fraction >= 1.0) mem.note(phase);
    check_interrupts();
    auto now = Clock::now();
    if (now - last_notice >= std::chrono::seconds(1)) {
      last_notice = now;
      std::string msg = "grounding: " + phase + " " + std::to_string(static_cast<int>(fraction * 100)) + "%";
      pg_call([&] { ereport(NOTICE, (errmsg_internal("%s", msg.c_str()))); });
    }
  };
  ClauseStream clauses;
  clauses.table = qi(ctx.schema) + "._clauses";
  clauses.propagate = opts.unit_propagate;
  if (!learning)
    opts.on_clauses = [&clauses](const int64_t* offsets, const int32_t* lits, const double* weights, size_t first,
                                 size_t last) { clauses.add(offsets, lits, weights, first, last); };
  // Live grounding where the program allows it (live_ground.hpp); the
  // same network as a grounding from scratch.
  // (ground_live names what it refuses: learning, -activateAll, closed_world.)
  LiveRun live;
  mln::ground::GroundOutput out;
  if (sql_path) live.why_not = "device sql";
  if (sql_path || !ground_live(spi, ctx, in, opts, out, live))
    out = sql_path ? ground_sql(spi, ctx, in, opts) : mln::ground::ground(in, *eng, opts);
  // The network is on the host now: the device memory the grounding's pool
  // keeps for reuse goes back, for the worker's walk (issue #45).
  if (eng) eng->release_cached_memory();
  auto t2 = Clock::now();
  StoreTimes st = store_network(spi, ctx, out, clauses);
  st.tables = tables_s;
  if (learning) store_learning(spi, ctx, out);
  t_carry = Clock::now();
  const CarriedAnswer carried = carry_answer(previous, live, before, out);
  before = StoredNetwork();  // freed before the statistics
  store_carried(spi, ctx.schema, carried);
  carry_s += std::chrono::duration<double>(Clock::now() - t_carry).count();
  if (previous.have()) out.phases.push_back({"carry", carry_s});
  mem.note("store");
  auto t3 = Clock::now();
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::string dev = sql_path ? "sql" : live.used ? "live" : eng->backend() == mln::gpu::Backend::CUDA ? "gpu" : "cpu";
  const size_t peak = eng ? eng->peak_memory_bytes() : 0;
  std::string stats = stats_json(out, dev, secs(t0, t1), secs(t2, t3), st, secs(t0, t3), eng ? &peak : nullptr, mem);
  stats.insert(stats.size() - 1, ", \"clause_stream\": {\"during_consolidation\": " + std::to_string(clauses.stored) +
                                     ", \"held_at\": " + (clauses.held ? std::to_string(clauses.held_at) : "null") +
                                     ", \"rewritten\": " + (clauses.rewritten ? "true" : "false") + "}");
  if (learning) stats.insert(stats.size() - 1, ", \"learning\": true");
  stats.insert(stats.size() - 1, ", \"live\": " + live.json() + ", \"carried\": " + carried_json(carried, previous));
  spi.exec("UPDATE mln.programs SET grounded_at = now(), ground_stats = $2 WHERE name = $1",
           {text_param(name), jsonb_param(stats)});
  sources.end(spi, name, device, activate_all, cw);
  // The network and result tables just made are opened to role mln_worker
  // here, not when a job is queued (issue #59: queueing grants nothing).
  // (A database at 0.1.0, before the role, has no such function.)
  if (spi.query("SELECT to_regprocedure('mln._grant_worker(name)') IS NOT NULL").boolean(0, 0))
    spi.exec("SELECT mln._grant_worker(schema_name) FROM mln.programs WHERE name = $1", {text_param(name)});
  // SPI_palloc: the result must outlive SPI_finish (pstrdup here would land in SPI's own context).
  return pg_call([&] { return strcpy(static_cast<char*>(SPI_palloc(stats.size() + 1)), stats.c_str()); });
}

}  // namespace

// mln.ground(name text, device text default 'auto', activate_all boolean default false,
//            closed_world text[]) returns jsonb
Datum mln_ground(PG_FUNCTION_ARGS) {
  char* json = nullptr;
  MLN_GUARDED({
    std::string name = text_arg(fcinfo, 0);
    std::string device = text_arg(fcinfo, 1);
    bool activate_all = PG_GETARG_BOOL(2);
    std::vector<std::string> cw = pg_call([&] {
      std::vector<std::string> v;
      ArrayType* a = PG_GETARG_ARRAYTYPE_P(3);
      Datum* elems;
      bool* nulls;
      int n;
      deconstruct_array(a, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
      for (int i = 0; i < n; ++i)
        if (!nulls[i]) v.push_back(TextDatumGetCString(elems[i]));
      return v;
    });
    json = ground_program(name, device, activate_all, cw, false);
  });
  PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

// mln._ground_learning(name text, device text) returns jsonb: the grounding
// for weight learning (query predicates' evidence as the training world).
Datum mln_ground_learning(PG_FUNCTION_ARGS) {
  char* json = nullptr;
  MLN_GUARDED({
    std::string name = text_arg(fcinfo, 0);
    std::string device = text_arg(fcinfo, 1);
    json = ground_program(name, device, false, {}, true);
  });
  PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}
