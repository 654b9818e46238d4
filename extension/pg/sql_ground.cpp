// The 'sql' grounding path (see sql_ground.hpp and docs/grounding-sql.md):
// Tuffy's pipeline as SQL over TEMP tables, one table per predicate
// (id, a0..ak-1, truth, prior, club, atom) plus the active sets, the raw
// clause buffer and the consolidated clauses.  The symbolic KBMC search runs
// in C++ (it is a few hundred patterns, as in Tuffy); every set-at-a-time
// step is one SQL statement.  The semantics follow the operator path
// (extension/ground/), including its documented deviations from Tuffy.
// This file runs the phases, loads the evidence, runs KBMC and the rules and
// reads the network back; sql_ground_clauses.cpp grounds the clauses.
#include "pg/sql_ground.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "pg/sql_ground_internal.hpp"

namespace mln::pg {
namespace sql_ground_detail {

using Clock = std::chrono::steady_clock;

SqlGrounder::SqlGrounder(Spi& spi, const ProgramCtx& ctx, const ground::GroundInput& in, const ground::GroundOptions& opts)
    : spi_(spi), ctx_(ctx), prog_(ctx.prog), in_(in), opts_(opts) {
  preds_.resize(prog_.preds.size());
  for (size_t p = 0; p < preds_.size(); ++p) {
    PredInfo& s = preds_[p];
    s.decl = &prog_.preds[p];
    s.arity = s.decl->arity();
    s.closed_world = s.decl->closed_world;
    s.completely_specified = s.decl->completely_specified;
    if (s.arity == 0) throw sql_unsupported("predicates without arguments (" + s.decl->name + ")");
  }
  for (int p : opts.extra_closed_world) preds_.at(p).closed_world = true;
  for (const auto& q : in.queries) {
    ground::QueryPattern qp = q;
    if (qp.args.empty())
      for (int k = 0; k < preds_[q.pred].arity; ++k) qp.args.push_back(-(k + 1));
    preds_[q.pred].queries.push_back(qp);
    preds_[q.pred].has_query = true;
  }
  for (size_t t = 0; t < in.type_domains.size(); ++t) type_index_[in.type_domains[t].first] = static_cast<int>(t);
  relevant_.assign(prog_.clauses.size(), 0);
  symbols_ = qualified(ctx.schema, "_symbols");
}

ground::GroundOutput SqlGrounder::run() {
  ground::GroundOutput out;
  check_supported();
  auto t0 = Clock::now();
  auto phase = [&](const std::string& name, const std::function<void()>& f) {
    progress(name, 0.0);
    f();
    auto t1 = Clock::now();
    out.phases.push_back({name, std::chrono::duration<double>(t1 - t0).count()});
    t0 = t1;
    progress(name, 1.0);
  };
  phase("evidence", [&] { create_tables(); load_evidence(); });
  phase("kbmc", [&] { compute_safe_ref_only(); run_kbmc(out); });
  phase("rules", [&] { run_rules(); analyze(); });
  phase("queries", [&] { mark_queries(); });
  phase("closure", [&] {
    if (opts_.activate_all) activate_all();
    else out.closure_rounds = closure();
  });
  phase("atoms", [&] { build_atom_table(); });
  phase("clauses", [&] { ground_active_clauses(); });
  phase("soft_evidence", [&] { add_soft_evidence_clauses(); });
  phase("key_constraints", [&] { add_key_constraint_clauses(); });
  phase("consolidate", [&] { consolidate(); });
  phase("read_back", [&] { read_back(out); drop_tables(); });
  if (opts_.unit_propagate && !opts_.learning)  // as ground() does (grounder.cpp)
    phase("unit_propagation", [&] { out.unit_propagation = ground::unit_propagate(out.network); });
  for (size_t i = 0; i < relevant_.size(); ++i)
    if (relevant_[i]) out.relevant_clauses.push_back(static_cast<int>(i));
  return out;
}

// Runs one generated statement and returns its row count; logs it with its
// duration and row count at DEBUG1 (SET client_min_messages = debug1).
uint64_t SqlGrounder::exec(const std::string& sql, const std::vector<Param>& params) {
  check_interrupts();
  auto t0 = Clock::now();
  uint64_t n = spi_.exec(sql, params);
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  pg_call([&] {
    ereport(DEBUG1, (errmsg_internal("mln sql (%.1f ms, %llu rows): %s", ms, static_cast<unsigned long long>(n),
                                     sql.c_str())));
  });
  return n;
}

// Features outside this path: refused up front, before any work.
void SqlGrounder::check_supported() const {
  for (const auto& cl : prog_.clauses)
    if (!cl.exist_vars.empty() && !cl.weight_var.empty() &&
        std::find(cl.exist_vars.begin(), cl.exist_vars.end(), cl.weight_var) != cl.exist_vars.end())
      throw sql_unsupported("an embedded weight bound to an existential variable");
}

void SqlGrounder::create_tables() {
  drop_tables();
  const char* oc = " ON COMMIT DROP";
  for (size_t p = 0; p < preds_.size(); ++p) {
    std::string c;
    for (int k = 0; k < preds_[p].arity; ++k) c += "a" + std::to_string(k) + " int4 NOT NULL, ";
    exec("CREATE TEMP TABLE mln_sql_p" + std::to_string(p) + " (id serial PRIMARY KEY, " + c +
         "truth boolean, prior float8, club int2 NOT NULL, atom int4)" + oc);
    exec("CREATE TEMP TABLE mln_sql_act" + std::to_string(p) + " (id int4 PRIMARY KEY)" + oc);
  }
  exec(std::string("CREATE TEMP TABLE mln_sql_dom (t int4 NOT NULL, v int4 NOT NULL)") + oc);
  exec(std::string("CREATE TEMP TABLE mln_sql_fresh (pred int4 NOT NULL, id int4 NOT NULL)") + oc);
  exec(std::string("CREATE TEMP TABLE mln_sql_cbuf (lits int4[] NOT NULL, weight float8 NOT NULL)") + oc);
  for (size_t t = 0; t < in_.type_domains.size(); ++t)
    exec("INSERT INTO pg_temp.mln_sql_dom SELECT $1, v FROM unnest($2) AS v",
         {int4_param(static_cast<int32_t>(t)), int4_array_param(in_.type_domains[t].second)});
}

// Drops every TEMP table of this path (also left-overs of an earlier call in
// the same transaction), without notices for missing ones.
void SqlGrounder::drop_tables() {
  Rows r = spi_.query(
      "SELECT string_agg('pg_temp.' || quote_ident(relname), ', ') FROM pg_catalog.pg_class "
      "WHERE relnamespace = pg_catalog.pg_my_temp_schema() AND relkind = 'r' AND relname LIKE 'mln\\_sql\\_%'");
  if (r.size() == 1 && !r.isnull(0, 0)) exec("DROP TABLE " + r.text(0, 0));
}

// Copies the evidence into the predicate tables, one row per tuple (the last
// one wins), with Tuffy's truth/prior/club encoding of hard and soft evidence.
void SqlGrounder::load_evidence() {
  for (size_t pi = 0; pi < preds_.size(); ++pi) {
    int p = static_cast<int>(pi);
    const lang::PredicateDecl& d = prog_.preds[p];
    const Binding& b = ctx_.bindings[p];
    std::string src;
    std::vector<Param> params;
    std::string a = cols(p);
    if (!b.bound) {
      std::vector<std::string> sel;
      for (int k = 0; k < d.arity(); ++k) sel.push_back(qi(d.arg_names[k]) + " AS a" + std::to_string(k));
      src = "(SELECT DISTINCT ON (" + a + ") " + sql_join(sel, ", ") + ", truth, prior, ctid AS o FROM " +
            qualified(ctx_.schema, d.name) + " ORDER BY " + a + ", ctid DESC)";
    } else {  // a bound relation: rows were read and interned by the caller
      const ground::PredEvidence& ev = in_.evidence.at(p);
      std::vector<std::string> u;
      for (int k = 0; k < d.arity(); ++k) {
        params.push_back(int4_array_param(ev.args[k]));
        u.push_back("$" + std::to_string(k + 1));
      }
      params.push_back(bool_array_param(ev.truth));
      params.push_back(float8_array_param(ev.prior));
      u.push_back("$" + std::to_string(d.arity() + 1));
      u.push_back("$" + std::to_string(d.arity() + 2));
      src = "(SELECT DISTINCT ON (" + a + ") * FROM unnest(" + sql_join(u, ", ") + ") WITH ORDINALITY AS u(" + a +
            ", truth, prior, o) ORDER BY " + a + ", o DESC)";
    }
    const std::string soft = "(e.prior > 0 AND e.prior < 1)";
    uint64_t n = exec("INSERT INTO " + tab(p) + " (" + a + ", truth, prior, club) SELECT " + cols(p, "e") +
                      ", CASE WHEN " + soft + " THEN true WHEN e.prior IS NULL OR e.prior = 'NaN' THEN e.truth "
                      "ELSE e.prior >= 1 END, CASE WHEN " + soft + " THEN e.prior END, CASE WHEN " + soft +
                      " THEN 0 ELSE 2 END FROM " + src + " AS e ORDER BY e.o", params);
    if (n > 0) refresh_has_soft(p);
  }
}

void SqlGrounder::refresh_has_soft(int p) {
  Rows r = spi_.query("SELECT EXISTS (SELECT 1 FROM " + tab(p) + " WHERE prior IS NOT NULL)");
  preds_[p].has_soft = preds_[p].has_soft || r.boolean(0, 0);
}

void SqlGrounder::analyze() {
  std::vector<std::string> t;
  for (size_t p = 0; p < preds_.size(); ++p) t.push_back(tab(static_cast<int>(p)));
  exec("ANALYZE " + sql_join(t, ", "));
}

void SqlGrounder::compute_safe_ref_only() {
  ground::kbmc::PredicateUse u = ground::kbmc::predicate_use(prog_);
  for (size_t p = 0; p < preds_.size(); ++p) {
    if (!u.safe_ref_only[p]) preds_[p].safe_ref_only = false;
    if (u.scoped[p]) preds_[p].scoped = true;
  }
}

// The shared backward-chaining search (ground/kbmc_search.hpp); then one
// INSERT per predicate materialises the relevant patterns (cross products
// of domains, minus present tuples).
void SqlGrounder::run_kbmc(ground::GroundOutput& out) {
  const size_t np = preds_.size();
  std::vector<std::vector<std::vector<int32_t>>> queries(np);
  std::vector<uint8_t> no_need(np);
  for (size_t p = 0; p < np; ++p) {
    for (const auto& q : preds_[p].queries) queries[p].push_back(q.args);
    no_need[p] = preds_[p].no_need_to_ground() ? 1 : 0;
  }
  ground::kbmc::SearchResult r = ground::kbmc::search(
      prog_, queries, no_need, [this](const lang::Term& t, TypeKind k) { return static_cast<int64_t>(constant_id(t, k)); });
  for (size_t ci = 0; ci < r.relevant.size(); ++ci)
    if (r.relevant[ci]) relevant_[ci] = 1;
  out.kbmc_patterns.insert(out.kbmc_patterns.end(), r.seeds.begin(), r.seeds.end());
  for (size_t p = 0; p < np; ++p) {
    progress("kbmc", static_cast<double>(p) / static_cast<double>(np));
    const PredInfo& s = preds_[p];
    if (s.scoped || s.no_need_to_ground()) continue;
    materialise(static_cast<int>(p), r.patterns[p]);
  }
}

// INSERT of the tuples of `pats` not yet present in predicate p's table.
void SqlGrounder::materialise(int p, const std::vector<ground::kbmc::Pattern>& pats) {
  if (pats.empty()) return;
  const lang::PredicateDecl& d = prog_.preds[p];
  std::vector<std::string> parts;
  for (const ground::kbmc::Pattern& t : pats) {
    std::vector<std::string> sel, from, where;
    int dim = ground::kbmc::dimension(t);
    for (int v = 1; v <= dim; ++v) {
      size_t pos = std::find(t.begin(), t.end(), v) - t.begin();
      std::string alias = "d" + std::to_string(v);
      from.push_back("pg_temp.mln_sql_dom AS " + alias);
      where.push_back(alias + ".t = " + std::to_string(type_of(d.arg_types[pos])));
    }
    for (size_t i = 0; i < t.size(); ++i)
      sel.push_back((ground::kbmc::is_var(t[i]) ? "d" + std::to_string(t[i]) + ".v" : std::to_string(t[i] - ground::kbmc::kConst)) +
                    " AS a" + std::to_string(i));
    std::string q = "SELECT " + sql_join(sel, ", ");
    if (!from.empty()) q += " FROM " + sql_join(from, " CROSS JOIN ") + " WHERE " + sql_join(where, " AND ");
    parts.push_back(q);
  }
  const PredInfo& s = preds_[p];
  std::string a = cols(p);
  exec("INSERT INTO " + tab(p) + " (" + a + ", truth, club) SELECT " + cols(p, "n") +
       (s.closed_world ? ", false, 2" : ", NULL::boolean, 0") + " FROM (" + sql_join(parts, " UNION ") +
       ") AS n WHERE NOT EXISTS (SELECT 1 FROM " + tab(p) + " AS t WHERE " + same_args(p, "t", "n") +
       ") ORDER BY " + cols(p, "n"));
}

// One rule (§2.7): its new head tuples go into the head's table.
void SqlGrounder::run_rule(const lang::Rule& r) {
  std::vector<lang::Literal> all = r.body;
  all.push_back(r.head);
  VarTypes vt = var_types(all);
  FromList f;
  f.sql = "(SELECT 1) AS u";
  int i = 0;
  for (const auto& l : r.body) {  // positive literals match every row, whatever its truth
    if (l.positive) f.sql += " JOIN " + tab(l.pred) + " AS b" + std::to_string(i) + " ON " +
                             join_on(f, l, "b" + std::to_string(i), true);
    ++i;
  }
  std::vector<std::string> where;
  i = 0;
  for (const auto& l : r.body) {  // negative literals: no tuple matches the bound arguments
    if (!l.positive) {
      std::string a = "n" + std::to_string(i);
      where.push_back("NOT EXISTS (SELECT 1 FROM " + tab(l.pred) + " AS " + a + " WHERE " +
                      join_on(f, l, a, false) + ")");
    }
    ++i;
  }
  const lang::PredicateDecl& hd = prog_.preds[r.head.pred];
  std::vector<std::string> head;
  for (size_t k = 0; k < r.head.args.size(); ++k) {
    const lang::Term& t = r.head.args[k];
    if (!t.is_var()) { head.push_back(std::to_string(constant_id(t, hd.arg_kinds[k]))); continue; }
    if (!f.vars.count(t.text)) {  // head variables the body leaves free range over their domain
      std::string a = "h" + std::to_string(k);
      f.sql += " JOIN pg_temp.mln_sql_dom AS " + a + " ON " + a + ".t = " + std::to_string(type_of(hd.arg_types[k]));
      f.vars[t.text] = a + ".v";
    }
    head.push_back(f.vars.at(t.text));
  }
  lang::Clause tmp;
  tmp.conditions = r.conditions;
  for (const auto& c : conditions(tmp, f, vt, true)) where.push_back(c);
  int p = r.head.pred;
  const PredInfo& s = preds_[p];
  std::string vals;
  if (!r.scoping) vals = r.head_plus ? "NULL::boolean, NULL::float8, 0" : std::string("true, NULL::float8, ") + (s.has_query ? "3" : "2");
  else if (!std::isnan(r.prior)) vals = "true, " + sql_float8(r.prior) + ", 0";
  else if (s.closed_world) vals = "false, NULL::float8, 2";
  else vals = "NULL::boolean, NULL::float8, 0";
  std::vector<std::string> hs;
  for (size_t k = 0; k < head.size(); ++k) hs.push_back(head[k] + " AS a" + std::to_string(k));
  std::string a = cols(p);
  uint64_t n = exec("INSERT INTO " + tab(p) + " (" + a + ", truth, prior, club) SELECT " + cols(p, "n") + ", " + vals +
                    " FROM (SELECT DISTINCT " + sql_join(hs, ", ") + " FROM " + f.sql +
                    (where.empty() ? "" : " WHERE " + sql_join(where, " AND ")) + ") AS n WHERE NOT EXISTS (SELECT 1 FROM " +
                    tab(p) + " AS t WHERE " + same_args(p, "t", "n") + ") ORDER BY " + cols(p, "n"));
  if (n > 0 && r.scoping && !std::isnan(r.prior)) preds_[p].has_soft = true;
}

void SqlGrounder::run_rules() {
  for (const auto& r : prog_.rules)
    if (!r.scoping && r.prefix == 0) run_rule(r);
  for (int pass = 0; pass < 2; ++pass)  // closed-world scoped heads first
    for (const auto& r : prog_.rules)
      if (r.scoping && r.prefix == 0 && preds_[r.head.pred].closed_world == (pass == 0)) run_rule(r);
}

// Query marking (§3.2): club 0 -> 1, 2 -> 3 on non-closed-world predicates.
void SqlGrounder::mark_queries() {
  for (size_t pi = 0; pi < preds_.size(); ++pi) {
    const PredInfo& s = preds_[pi];
    if (s.closed_world || s.queries.empty()) continue;
    std::vector<std::string> any;
    for (const auto& q : s.queries) {
      std::vector<std::string> c;
      for (int k = 0; k < s.arity; ++k) {
        if (q.args[k] >= 0) { c.push_back("a" + std::to_string(k) + " = " + std::to_string(q.args[k])); continue; }
        for (int j = 0; j < k; ++j)
          if (q.args[j] == q.args[k]) { c.push_back("a" + std::to_string(k) + " = a" + std::to_string(j)); break; }
      }
      any.push_back(c.empty() ? "true" : "(" + sql_join(c, " AND ") + ")");
    }
    exec("UPDATE " + tab(static_cast<int>(pi)) + " SET club = club + 1 WHERE club IN (0, 2) AND (" + sql_join(any, " OR ") + ")");
  }
}

void SqlGrounder::read_back(ground::GroundOutput& out) {
  for (size_t pi = 0; pi < preds_.size(); ++pi) {
    int p = static_cast<int>(pi);
    int k = preds_[p].arity;
    Rows r = spi_.query("SELECT atom, truth, prior, club, " + cols(p) + " FROM " + tab(p) +
                        " WHERE atom IS NOT NULL ORDER BY atom");
    for (size_t i = 0; i < r.size(); ++i) {
      size_t id = static_cast<size_t>(r.int4(i, 0));
      if (out.atoms.size() < id) out.atoms.resize(id);
      ground::Atom& a = out.atoms[id - 1];
      a.pred = p;
      a.evidence = r.isnull(i, 1) ? -1 : (r.boolean(i, 1) ? 1 : 0);
      a.prior = r.isnull(i, 2) ? std::nan("") : r.float8(i, 2);
      int club = r.int4(i, 3);
      a.is_query = club == 1 || club == 3;
      a.args.resize(k);
      for (int j = 0; j < k; ++j) a.args[j] = r.int4(i, 4 + j);
    }
    Rows q = spi_.query("SELECT " + cols(p) + " FROM " + tab(p) + " WHERE club = 3 AND truth IS TRUE ORDER BY id");
    for (size_t i = 0; i < q.size(); ++i) {
      std::vector<int32_t> args(k);
      for (int j = 0; j < k; ++j) args[j] = q.int4(i, j);
      out.true_query_evidence.emplace_back(p, std::move(args));
    }
  }
  Rows c = spi_.query("SELECT lits, weight FROM pg_temp.mln_sql_clauses ORDER BY lits");
  for (size_t i = 0; i < c.size(); ++i) {
    std::vector<int32_t> l = c.int4_array(i, 0);
    out.network.clauses.add(l.data(), l.size(), c.float8(i, 1));
    if (i % 65536 == 0) check_interrupts();
  }
  out.network.num_atoms = static_cast<int32_t>(out.atoms.size());
  out.network.is_query.assign(out.atoms.size() + 1, 0);
  for (size_t i = 0; i < out.atoms.size(); ++i) out.network.is_query[i + 1] = out.atoms[i].is_query;
}

}  // namespace sql_ground_detail

ground::GroundOutput ground_sql(Spi& spi, const ProgramCtx& ctx, const ground::GroundInput& in,
                                const ground::GroundOptions& opts) {
  return sql_ground_detail::SqlGrounder(spi, ctx, in, opts).run();
}

}  // namespace mln::pg
