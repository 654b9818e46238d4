// The 'sql' grounding path (see sql_ground.hpp and docs/grounding-sql.md):
// Tuffy's pipeline as SQL over TEMP tables, one table per predicate
// (id, a0..ak-1, truth, prior, club, atom) plus the active sets, the raw
// clause buffer and the consolidated clauses.  The symbolic KBMC search runs
// in C++ (it is a few hundred patterns, as in Tuffy); every set-at-a-time
// step is one SQL statement.  The semantics follow the operator path
// (extension/ground/), including its documented deviations from Tuffy.
#include "pg/sql_ground.hpp"

#include "ground/kbmc_search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

extern "C" {
#include "utils/builtins.h"
}

namespace mln::pg {
namespace {

using lang::Expr;
using lang::TypeKind;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------
// Small helpers.

// Joins strings with a separator.
std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

// A float8 SQL literal.
std::string num_sql(double d) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", d);
  return std::string("(") + buf + ")::float8";
}

// A text SQL literal (quote_literal).
std::string str_sql(const std::string& s) {
  return pg_call([&] { return std::string(quote_literal_cstr(s.c_str())); });
}

// The error raised for a feature this path does not implement.
UserError unsupported(const std::string& feature) {
  return UserError{ERRCODE_FEATURE_NOT_SUPPORTED, "the 'sql' grounding path does not support " + feature, "",
                   "use device => 'cpu' (or 'auto')"};
}


// ---------------------------------------------------------------------------

// Per-predicate facts the grounder needs (the SQL tables hold the rows).
struct PredInfo {
  const lang::PredicateDecl* decl = nullptr;
  int arity = 0;
  bool closed_world = false, completely_specified = false, safe_ref_only = true, scoped = false;
  bool has_query = false, has_soft = false;
  std::vector<ground::QueryPattern> queries;
  int64_t unknown = 0, active = 0;  // closure counters (club < 2 rows, active rows)
  bool immutable() const { return closed_world && !has_soft; }
  bool no_need_to_ground() const { return (safe_ref_only && closed_world) || completely_specified; }
};

// A clause body's FROM list in Tuffy's order, with the variable bindings.
struct FromList {
  std::string sql;
  std::map<std::string, std::string> vars;  // variable -> column expression
  std::vector<char> left;                   // by literal: LEFT JOINed
};

// Type of each clause variable (from its first argument position).
using VarTypes = std::map<std::string, std::pair<std::string, TypeKind>>;

class SqlGrounder {
 public:
  SqlGrounder(Spi& spi, const ProgramCtx& ctx, const ground::GroundInput& in, const ground::GroundOptions& opts)
      : spi_(spi), ctx_(ctx), prog_(ctx.prog), in_(in), opts_(opts) {
    preds_.resize(prog_.preds.size());
    for (size_t p = 0; p < preds_.size(); ++p) {
      PredInfo& s = preds_[p];
      s.decl = &prog_.preds[p];
      s.arity = s.decl->arity();
      s.closed_world = s.decl->closed_world;
      s.completely_specified = s.decl->completely_specified;
      if (s.arity == 0) throw unsupported("predicates without arguments (" + s.decl->name + ")");
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

  // Runs every phase and reads the network back.
  ground::GroundOutput run() {
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

 private:
  // ---- statements and names ----

  // Runs one generated statement and returns its row count; logs it with its
  // duration and row count at DEBUG1 (SET client_min_messages = debug1).
  uint64_t exec(const std::string& sql, const std::vector<Param>& params = {}) {
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
  // Calls the caller's progress callback (which may cancel).
  void progress(const std::string& phase, double f) const {
    if (opts_.progress) opts_.progress(phase, f);
  }
  std::string tab(int p) const { return "pg_temp.mln_sql_p" + std::to_string(p); }
  std::string act(int p) const { return "pg_temp.mln_sql_act" + std::to_string(p); }
  static std::string col(const std::string& alias, int k) { return alias + ".a" + std::to_string(k); }
  // "a0, a1, ..." (optionally alias-qualified).
  std::string cols(int p, const std::string& alias = "") const {
    std::vector<std::string> v;
    for (int k = 0; k < preds_[p].arity; ++k) v.push_back(alias.empty() ? "a" + std::to_string(k) : col(alias, k));
    return join(v, ", ");
  }
  // "x.a0 = y.a0 AND ..." over every argument.
  std::string same_args(int p, const std::string& x, const std::string& y) const {
    std::vector<std::string> v;
    for (int k = 0; k < preds_[p].arity; ++k) v.push_back(col(x, k) + " = " + col(y, k));
    return join(v, " AND ");
  }

  // Symbol id (or raw integer) of a constant term.
  int32_t constant_id(const lang::Term& t, TypeKind kind) const {
    return ground::rule_constant_id(t, kind, in_.symbols);
  }

  // Features outside this path: refused up front, before any work.
  void check_supported() const {
    for (const auto& cl : prog_.clauses)
      if (!cl.exist_vars.empty() && !cl.weight_var.empty() &&
          std::find(cl.exist_vars.begin(), cl.exist_vars.end(), cl.weight_var) != cl.exist_vars.end())
        throw unsupported("an embedded weight bound to an existential variable");
  }

  // ---- tables, evidence ----

  void create_tables() {
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
  void drop_tables() {
    Rows r = spi_.query(
        "SELECT string_agg('pg_temp.' || quote_ident(relname), ', ') FROM pg_catalog.pg_class "
        "WHERE relnamespace = pg_catalog.pg_my_temp_schema() AND relkind = 'r' AND relname LIKE 'mln\\_sql\\_%'");
    if (r.size() == 1 && !r.isnull(0, 0)) exec("DROP TABLE " + r.text(0, 0));
  }

  // Copies the evidence into the predicate tables, one row per tuple (the last
  // one wins), with Tuffy's truth/prior/club encoding of hard and soft evidence.
  void load_evidence() {
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
        src = "(SELECT DISTINCT ON (" + a + ") " + join(sel, ", ") + ", truth, prior, ctid AS o FROM " +
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
        src = "(SELECT DISTINCT ON (" + a + ") * FROM unnest(" + join(u, ", ") + ") WITH ORDINALITY AS u(" + a +
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

  void refresh_has_soft(int p) {
    Rows r = spi_.query("SELECT EXISTS (SELECT 1 FROM " + tab(p) + " WHERE prior IS NOT NULL)");
    preds_[p].has_soft = preds_[p].has_soft || r.boolean(0, 0);
  }

  void analyze() {
    std::vector<std::string> t;
    for (size_t p = 0; p < preds_.size(); ++p) t.push_back(tab(static_cast<int>(p)));
    exec("ANALYZE " + join(t, ", "));
  }

  // ---- KBMC ----

  void compute_safe_ref_only() {
    ground::kbmc::PredicateUse u = ground::kbmc::predicate_use(prog_);
    for (size_t p = 0; p < preds_.size(); ++p) {
      if (!u.safe_ref_only[p]) preds_[p].safe_ref_only = false;
      if (u.scoped[p]) preds_[p].scoped = true;
    }
  }

  // The shared backward-chaining search (ground/kbmc_search.hpp); then one
  // INSERT per predicate materialises the relevant patterns (cross products
  // of domains, minus present tuples).
  void run_kbmc(ground::GroundOutput& out) {
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
  void materialise(int p, const std::vector<ground::kbmc::Pattern>& pats) {
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
      std::string q = "SELECT " + join(sel, ", ");
      if (!from.empty()) q += " FROM " + join(from, " CROSS JOIN ") + " WHERE " + join(where, " AND ");
      parts.push_back(q);
    }
    const PredInfo& s = preds_[p];
    std::string a = cols(p);
    exec("INSERT INTO " + tab(p) + " (" + a + ", truth, club) SELECT " + cols(p, "n") +
         (s.closed_world ? ", false, 2" : ", NULL::boolean, 0") + " FROM (" + join(parts, " UNION ") +
         ") AS n WHERE NOT EXISTS (SELECT 1 FROM " + tab(p) + " AS t WHERE " + same_args(p, "t", "n") +
         ") ORDER BY " + cols(p, "n"));
  }

  // Index of a type in mln_sql_dom (-1: no domain, e.g. numeric types).
  int type_of(const std::string& type) const {
    auto it = type_index_.find(type);
    return it == type_index_.end() ? -1 : it->second;
  }

  // ---- FROM lists and conditions ----

  VarTypes var_types(const std::vector<lang::Literal>& lits) const {
    VarTypes vt;
    for (const auto& l : lits) {
      const lang::PredicateDecl& d = prog_.preds[l.pred];
      for (size_t i = 0; i < l.args.size(); ++i)
        if (l.args[i].is_var() && !vt.count(l.args[i].text)) vt[l.args[i].text] = {d.arg_types[i], d.arg_kinds[i]};
    }
    return vt;
  }

  // Tuffy's literal order: negative literals first, then positive.
  static std::vector<int> plan_order(const std::vector<lang::Literal>& lits) {
    std::vector<int> order;
    for (int pass = 0; pass < 2; ++pass)
      for (int i = 0; i < static_cast<int>(lits.size()); ++i)
        if (lits[i].positive == (pass == 1)) order.push_back(i);
    return order;
  }

  bool all_bound(const FromList& f, const lang::Literal& l) const {
    for (const auto& t : l.args)
      if (t.is_var() && !f.vars.count(t.text)) return false;
    return true;
  }

  // Join conditions of literal `l` aliased `alias`: constants, variables bound
  // before it, repeated variables; binds its new variables into `f`.
  std::string join_on(FromList& f, const lang::Literal& l, const std::string& alias, bool bind) const {
    const lang::PredicateDecl& d = prog_.preds[l.pred];
    std::vector<std::string> on;
    std::map<std::string, std::string> local;
    for (size_t k = 0; k < l.args.size(); ++k) {
      const lang::Term& t = l.args[k];
      std::string c = col(alias, static_cast<int>(k));
      if (!t.is_var()) on.push_back(c + " = " + std::to_string(constant_id(t, d.arg_kinds[k])));
      else if (f.vars.count(t.text)) on.push_back(c + " = " + f.vars.at(t.text));
      else if (local.count(t.text)) on.push_back(c + " = " + local.at(t.text));
      else local[t.text] = c;
    }
    if (bind) f.vars.insert(local.begin(), local.end());
    return on.empty() ? "true" : join(on, " AND ");
  }

  // Tuffy's FROM list (Clause.generateSQL): literals in plan order aliased
  // t<i>; a positive literal whose variables are all bound is LEFT JOINed
  // (absent tuples read as false), unless its predicate is '**'.
  FromList from_list(const std::vector<lang::Literal>& lits) const {
    FromList f;
    f.sql = "(SELECT 1) AS u";
    f.left.assign(lits.size(), 0);
    for (int i : plan_order(lits)) {
      const lang::Literal& l = lits[i];
      std::string alias = "t" + std::to_string(i);
      bool left = l.positive && all_bound(f, l) && !preds_[l.pred].completely_specified;
      std::string on = join_on(f, l, alias, true);
      f.sql += (left ? " LEFT JOIN " : " JOIN ") + tab(l.pred) + " AS " + alias + " ON " + on;
      f.left[i] = left;
    }
    return f;
  }

  std::string alias(int i) const { return "t" + std::to_string(i); }
  std::string active_sql(int p, const std::string& a) const { return a + ".id IN (SELECT id FROM " + act(p) + ")"; }
  // OR of a literal's pass conditions; absent tuples of LEFT JOINed literals pass.
  static std::string any_of(const std::vector<std::string>& parts, bool left, const std::string& a) {
    std::string s = parts.empty() ? "false" : join(parts, " OR ");
    return left ? "(" + a + ".id IS NULL OR " + s + ")" : "(" + s + ")";
  }

  // §5.4 condition of literal i during the closure (clause weight sign `pos`).
  std::string closure_cond(const lang::Clause& cl, const FromList& f, int i, bool pos) const {
    const lang::Literal& l = cl.lits[i];
    std::string a = alias(i);
    bool ow = !preds_[l.pred].closed_world;
    std::vector<std::string> parts;
    parts.push_back(a + (l.positive ? ".truth IS FALSE" : ".truth IS TRUE"));
    parts.push_back(active_sql(l.pred, a));
    if (ow && (l.positive || !pos)) parts.push_back(a + ".club < 2");
    return any_of(parts, f.left[i], a);
  }

  // "Unknown" cell of the §5.5 table for literal i.
  std::vector<std::string> unknown_parts(int p, const std::string& a) const {
    if (!preds_[p].closed_world) return {a + ".club < 2", a + ".prior IS NOT NULL"};
    if (preds_[p].has_soft) return {active_sql(p, a)};
    return {};
  }

  // §5.5 condition of literal i when grounding clauses.
  std::string clause_cond(const lang::Clause& cl, const FromList& f, int i, bool pos) const {
    const lang::Literal& l = cl.lits[i];
    std::string a = alias(i);
    std::vector<std::string> parts;
    parts.push_back(a + (l.positive ? ".truth IS FALSE" : ".truth IS TRUE"));
    if (!l.positive && pos) {
      parts.push_back(active_sql(l.pred, a));
    } else {
      auto u = unknown_parts(l.pred, a);
      parts.insert(parts.end(), u.begin(), u.end());
    }
    return any_of(parts, f.left[i], a);
  }

  // ---- built-in conditions as SQL (Tuffy §2.5; the operator path's semantics) ----

  struct Val {
    bool is_str;
    std::string sql;
  };

  std::string symbol_name(const std::string& id_sql) const {
    return "(SELECT s.name FROM " + symbols_ + " AS s WHERE s.id = " + id_sql + ")";
  }
  static std::string to_num(const Val& v) { return v.is_str ? "(" + v.sql + ")::float8" : v.sql; }
  // Text of a value; numbers print as integers when integral (as the host evaluator does).
  static std::string to_str(const Val& v) {
    if (v.is_str) return v.sql;
    return "(CASE WHEN " + v.sql + " = trunc(" + v.sql + ") AND abs(" + v.sql + ") < 1e15 THEN trunc(" + v.sql +
           ")::int8::text ELSE (" + v.sql + ")::text END)";
  }
  static std::string truthy(const Val& v) {
    return v.is_str ? "(" + v.sql + " NOT IN ('', 'f', 'false'))" : "(" + v.sql + " <> 0)";
  }
  static Val bool_val(const std::string& cond) { return {false, "(CASE WHEN " + cond + " THEN 1 ELSE 0 END)::float8"}; }

  // Id comparisons for the simple forms (symbolic var op var / const, int var op int const).
  bool simple_cmp(const Expr& e, const FromList& f, const VarTypes& vt, std::string& out) const {
    static const std::set<std::string> eq{"=", "!=", "<>"};
    const Expr* l = &e.args.at(0);
    const Expr* r = &e.args.at(1);
    std::string op = e.text == "!=" ? "<>" : e.text;
    if (l->kind != Expr::Kind::Var) {
      std::swap(l, r);
      if (op == "<") op = ">"; else if (op == ">") op = "<"; else if (op == "<=") op = ">="; else if (op == ">=") op = "<=";
    }
    if (l->kind != Expr::Kind::Var || !f.vars.count(l->text)) return false;
    if (r->kind == Expr::Kind::Var && !f.vars.count(r->text)) return false;
    TypeKind lk = vt.at(l->text).second;
    if (lk == TypeKind::Float) return false;
    const std::string& lc = f.vars.at(l->text);
    if (r->kind == Expr::Kind::Var) {
      if (vt.at(r->text).second != lk || (lk == TypeKind::Symbol && !eq.count(op))) return false;
      out = "(" + lc + " " + op + " " + f.vars.at(r->text) + ")";
      return true;
    }
    if (lk == TypeKind::Int) {
      if (r->kind != Expr::Kind::Num || std::floor(r->num) != r->num || std::fabs(r->num) > 2e9) return false;
      out = "(" + lc + " " + op + " " + std::to_string(static_cast<long long>(r->num)) + ")";
      return true;
    }
    if (!eq.count(op) || (r->kind != Expr::Kind::Num && r->kind != Expr::Kind::Str)) return false;
    std::string text = r->text;
    if (r->kind == Expr::Kind::Num) {
      if (std::floor(r->num) == r->num && std::fabs(r->num) < 1e15) text = std::to_string(static_cast<long long>(r->num));
      else { char b[64]; snprintf(b, sizeof b, "%.15g", r->num); text = b; }
    }
    const int32_t id = in_.symbols.id_of(text);
    if (id == 0) out = op == "=" ? "false" : "true";
    else out = "(" + lc + " " + op + " " + std::to_string(id) + ")";
    return true;
  }

  // An expression as a typed SQL value.
  Val value(const Expr& e, const FromList& f, const VarTypes& vt) const {
    switch (e.kind) {
      case Expr::Kind::Var: {
        auto it = f.vars.find(e.text);
        if (it == f.vars.end())
          throw lang::LangError(lang::LangError::Kind::UnsafeVariable, 0, 0, e.text,
                                "unsafe constraints: a condition uses a variable that no literal binds");
        TypeKind k = vt.at(e.text).second;
        if (k == TypeKind::Int) return {false, "(" + it->second + ")::float8"};
        if (k == TypeKind::Float) return {false, symbol_name(it->second) + "::float8"};
        return {true, symbol_name(it->second)};
      }
      case Expr::Kind::Num: return {false, num_sql(e.num)};
      case Expr::Kind::Str: return {true, str_sql(e.text)};
      case Expr::Kind::Unary: {
        Val a = value(e.args.at(0), f, vt);
        if (e.text == "!") return bool_val("NOT " + truthy(a));
        if (e.text == "-") return {false, "(-" + to_num(a) + ")"};
        throw unsupported("the operator '" + e.text + "' in conditions");
      }
      case Expr::Kind::Binary: {
        const std::string& op = e.text;
        static const std::set<std::string> cmp{"=", "!=", "<>", "<", "<=", ">", ">="};
        if (cmp.count(op)) {
          std::string s;
          if (simple_cmp(e, f, vt, s)) return bool_val(s);
        }
        Val a = value(e.args.at(0), f, vt), b = value(e.args.at(1), f, vt);
        if (op == "&&") return bool_val(truthy(a) + " AND " + truthy(b));
        if (op == "||") return bool_val(truthy(a) + " OR " + truthy(b));
        std::string sop = op == "!=" ? "<>" : op;
        if (op == "=" || op == "!=" || op == "<>") {
          if (a.is_str || b.is_str) return bool_val(to_str(a) + " " + sop + " " + to_str(b));
          return bool_val(a.sql + " " + sop + " " + b.sql);
        }
        std::string x = to_num(a), y = to_num(b);
        if (cmp.count(op)) return bool_val(x + " " + sop + " " + y);
        if (op == "+" || op == "-" || op == "*" || op == "/") return {false, "(" + x + " " + op + " " + y + ")"};
        if (op == "%") return {false, "(" + x + " - " + y + " * trunc(" + x + " / " + y + "))"};
        throw unsupported("the operator '" + op + "' in conditions");
      }
      case Expr::Kind::Call: {
        std::vector<Val> a;
        for (const auto& x : e.args) a.push_back(value(x, f, vt));
        auto n = [&](size_t i) { return to_num(a.at(i)); };
        auto s = [&](size_t i) { return to_str(a.at(i)); };
        const std::string& fn = e.text;
        static const std::set<std::string> num1{"abs", "sign", "exp", "ceil", "ceiling", "floor", "trunc", "ln", "sqrt",
                                                "sin", "cos", "tan"};
        if (num1.count(fn) && a.size() == 1) return {false, fn + "(" + n(0) + ")"};
        if (fn == "lg" && a.size() == 1) return {false, "log(" + n(0) + ")"};
        if ((fn == "pow" || fn == "power") && a.size() == 2) return {false, "power(" + n(0) + ", " + n(1) + ")"};
        if (fn == "add" && a.size() == 2) return {false, "(" + n(0) + " + " + n(1) + ")"};
        if (fn == "subtract" && a.size() == 2) return {false, "(" + n(0) + " - " + n(1) + ")"};
        if (fn == "multiply" && a.size() == 2) return {false, "(" + n(0) + " * " + n(1) + ")"};
        if (fn == "divide" && a.size() == 2) return {false, "(" + n(0) + " / " + n(1) + ")"};
        if ((fn == "length" || fn == "len" || fn == "strlen") && a.size() == 1)
          return {false, "length(" + s(0) + ")::float8"};
        if ((fn == "upper" || fn == "lower") && a.size() == 1) return {true, fn + "(" + s(0) + ")"};
        if (fn == "contains" && a.size() == 2) return bool_val("strpos(" + s(0) + ", " + s(1) + ") > 0");
        if (fn == "startswith" && a.size() == 2) return bool_val("starts_with(" + s(0) + ", " + s(1) + ")");
        if (fn == "endswith" && a.size() == 2)
          return bool_val("right(" + s(0) + ", length(" + s(1) + ")) = " + s(1));
        throw unsupported("the function '" + fn + "' in conditions");
      }
    }
    return {false, "0"};
  }

  // The clause's conditions (plus w > 0 / w < 0 for embedded weights) as SQL.
  std::vector<std::string> conditions(const lang::Clause& cl, const FromList& f, const VarTypes& vt, bool pos) const {
    std::vector<std::string> out;
    for (const auto& e : cl.conditions) out.push_back(truthy(value(e, f, vt)));
    if (!cl.weight_var.empty()) {
      Expr v, zero, c;
      v.kind = Expr::Kind::Var;
      v.text = cl.weight_var;
      zero.kind = Expr::Kind::Num;
      c.kind = Expr::Kind::Binary;
      c.text = pos ? ">" : "<";
      c.args = {v, zero};
      out.push_back(truthy(value(c, f, vt)));
    }
    return out;
  }

  // Columns of the non-existential variables (the EXIST group key).
  std::vector<std::string> group_cols(const lang::Clause& cl, const FromList& f) const {
    std::vector<std::string> g;
    for (const auto& [v, c] : f.vars)
      if (std::find(cl.exist_vars.begin(), cl.exist_vars.end(), v) == cl.exist_vars.end()) g.push_back(c);
    return g;
  }

  // ---- Datalog and scoping rules, queries ----

  // One rule (§2.7): its new head tuples go into the head's table.
  void run_rule(const lang::Rule& r) {
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
    else if (!std::isnan(r.prior)) vals = "true, " + num_sql(r.prior) + ", 0";
    else if (s.closed_world) vals = "false, NULL::float8, 2";
    else vals = "NULL::boolean, NULL::float8, 0";
    std::vector<std::string> hs;
    for (size_t k = 0; k < head.size(); ++k) hs.push_back(head[k] + " AS a" + std::to_string(k));
    std::string a = cols(p);
    uint64_t n = exec("INSERT INTO " + tab(p) + " (" + a + ", truth, prior, club) SELECT " + cols(p, "n") + ", " + vals +
                      " FROM (SELECT DISTINCT " + join(hs, ", ") + " FROM " + f.sql +
                      (where.empty() ? "" : " WHERE " + join(where, " AND ")) + ") AS n WHERE NOT EXISTS (SELECT 1 FROM " +
                      tab(p) + " AS t WHERE " + same_args(p, "t", "n") + ") ORDER BY " + cols(p, "n"));
    if (n > 0 && r.scoping && !std::isnan(r.prior)) preds_[p].has_soft = true;
  }

  void run_rules() {
    for (const auto& r : prog_.rules)
      if (!r.scoping && r.prefix == 0) run_rule(r);
    for (int pass = 0; pass < 2; ++pass)  // closed-world scoped heads first
      for (const auto& r : prog_.rules)
        if (r.scoping && r.prefix == 0 && preds_[r.head.pred].closed_world == (pass == 0)) run_rule(r);
  }

  // Query marking (§3.2): club 0 -> 1, 2 -> 3 on non-closed-world predicates.
  void mark_queries() {
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
        any.push_back(c.empty() ? "true" : "(" + join(c, " AND ") + ")");
      }
      exec("UPDATE " + tab(static_cast<int>(pi)) + " SET club = club + 1 WHERE club IN (0, 2) AND (" + join(any, " OR ") + ")");
    }
  }

  // ---- closure of active atoms (§5.4) ----

  // Rounds of INSERT ... SELECT DISTINCT over the fresh clauses; returns the round count.
  int closure() {
    size_t np = preds_.size();
    for (size_t p = 0; p < np; ++p) {
      int pi = static_cast<int>(p);
      preds_[p].active = static_cast<int64_t>(
          exec("INSERT INTO " + act(pi) + " SELECT id FROM " + tab(pi) + " WHERE prior IS NOT NULL"));
      Rows r = spi_.query("SELECT count(*) FROM " + tab(pi) + " WHERE club < 2");
      preds_[p].unknown = r.int8(0, 0);
    }
    std::vector<uint8_t> changed(np, 1);
    int rounds = 0;
    for (;;) {
      ++rounds;
      const auto& clauses = prog_.clauses;
      for (size_t ci = 0; ci < clauses.size(); ++ci) {
        progress("closure", static_cast<double>(ci) / static_cast<double>(clauses.size()));
        if (!relevant_[ci]) continue;
        const lang::Clause& cl = clauses[ci];
        std::vector<bool> signs = cl.weight_var.empty() ? std::vector<bool>{cl.weight > 0} : std::vector<bool>{true, false};
        for (bool pos : signs) closure_clause(cl, pos, rounds == 1, changed);
      }
      bool any = false;
      std::fill(changed.begin(), changed.end(), 0);
      for (size_t p = 0; p < np; ++p) {
        int pi = static_cast<int>(p);
        uint64_t n = exec("INSERT INTO " + act(pi) + " SELECT DISTINCT f.id FROM pg_temp.mln_sql_fresh AS f WHERE f.pred = " +
                          std::to_string(pi) + " AND NOT EXISTS (SELECT 1 FROM " + act(pi) + " AS a WHERE a.id = f.id)");
        if (n == 0) continue;
        preds_[p].active += static_cast<int64_t>(n);
        changed[p] = 1;
        any = true;
      }
      exec("TRUNCATE pg_temp.mln_sql_fresh");
      if (!any || !more_to_ground()) break;
    }
    return rounds;
  }

  // Tuffy's second stop test: some mutable predicate has inactive unknown atoms.
  bool more_to_ground() const {
    for (const auto& s : preds_)
      if (!s.immutable() && s.unknown > s.active) return true;
    return false;
  }

  // One clause and weight sign in one round: worth/fresh tests, then the INSERT.
  void closure_clause(const lang::Clause& cl, bool pos, bool first_round, const std::vector<uint8_t>& changed) {
    bool worth = false, fresh = first_round, neg_ow = false;
    for (const auto& l : cl.lits) {
      const PredInfo& s = preds_[l.pred];
      if (l.positive == pos && !s.immutable()) worth = true;
      if (changed[l.pred]) fresh = true;
      if (!l.positive && !s.closed_world) neg_ow = true;
    }
    if (!worth || !fresh || (!pos && !neg_ow)) return;
    FromList f = from_list(cl.lits);
    VarTypes vt = var_types(cl.lits);
    std::vector<std::string> lit_conds, hits, values, neg_unknown;
    for (size_t i = 0; i < cl.lits.size(); ++i) {
      const lang::Literal& l = cl.lits[i];
      int ii = static_cast<int>(i);
      lit_conds.push_back(closure_cond(cl, f, ii, pos));
      if (!l.positive && !preds_[l.pred].closed_world) neg_unknown.push_back(alias(ii) + ".club < 2");
      if (l.positive != pos || preds_[l.pred].immutable()) continue;
      std::string h = "h" + std::to_string(hits.size());
      hits.push_back("CASE WHEN " + alias(ii) + ".club < 2 THEN " + alias(ii) + ".id END AS " + h);
      values.push_back("(" + std::to_string(l.pred) + ", b." + h + ")");
    }
    std::vector<std::string> conds = conditions(cl, f, vt, pos);
    std::string neg = pos ? "" : "(" + join(neg_unknown, " OR ") + ")";
    std::string inner;
    if (cl.exist_vars.empty()) {
      std::vector<std::string> w = lit_conds;
      w.insert(w.end(), conds.begin(), conds.end());
      if (!pos) w.push_back(neg);
      inner = "SELECT DISTINCT " + join(hits, ", ") + " FROM " + f.sql + " WHERE " + join(w, " AND ");
    } else {  // EXIST: a group activates only if every one of its rows passes
      std::vector<std::string> g = group_cols(cl, f);
      inner = "SELECT * FROM (SELECT " + join(hits, ", ") + ", bool_and(" + join(lit_conds, " AND ") +
              ") OVER (" + (g.empty() ? "" : "PARTITION BY " + join(g, ", ")) + ") AS gok" +
              (pos ? "" : ", " + neg + " AS nx") + " FROM " + f.sql +
              (conds.empty() ? "" : " WHERE " + join(conds, " AND ")) + ") AS r WHERE r.gok" + (pos ? "" : " AND r.nx");
    }
    exec("INSERT INTO pg_temp.mln_sql_fresh (pred, id) SELECT DISTINCT x.pred, x.id FROM (" + inner +
         ") AS b CROSS JOIN LATERAL (VALUES " + join(values, ", ") + ") AS x(pred, id) WHERE x.id IS NOT NULL");
  }

  // -activateAll (§5.8): every club < 2 row is active.
  void activate_all() {
    for (size_t p = 0; p < preds_.size(); ++p)
      exec("INSERT INTO " + act(static_cast<int>(p)) + " SELECT id FROM " + tab(static_cast<int>(p)) + " WHERE club < 2");
  }

  // ---- atom table, clauses, consolidation ----

  // Atom ids 1, 2, ... by predicate (declaration order) and tuple id.
  void build_atom_table() {
    int64_t next = 0;
    for (size_t p = 0; p < preds_.size(); ++p) {
      const PredInfo& s = preds_[p];
      if (s.immutable() && !s.has_query) continue;  // Tuffy: "Not using atoms from"
      int pi = static_cast<int>(p);
      next += static_cast<int64_t>(exec("UPDATE " + tab(pi) + " AS t SET atom = n.atom FROM (SELECT id, (" +
                                        std::to_string(next) + " + row_number() OVER (ORDER BY id))::int4 AS atom FROM " +
                                        act(pi) + ") AS n WHERE n.id = t.id"));
    }
    analyze();
  }

  void ground_active_clauses() {
    const auto& clauses = prog_.clauses;
    for (size_t ci = 0; ci < clauses.size(); ++ci) {
      progress("clauses", static_cast<double>(ci) / static_cast<double>(clauses.size()));
      if (!relevant_[ci]) continue;
      const lang::Clause& cl = clauses[ci];
      bool any_mutable = false;
      for (const auto& l : cl.lits) any_mutable |= !preds_[l.pred].immutable();
      if (!any_mutable) continue;
      if (!cl.weight_var.empty()) {
        ground_clause(cl, true);
        ground_clause(cl, false);
      } else {
        ground_clause(cl, cl.weight > 0);
      }
    }
  }

  // One clause, one weight sign (§5.5): sorted, de-duplicated signed atom-id
  // arrays into the clause buffer, with unit clauses [-a], w flipped to [a], -w.
  void ground_clause(const lang::Clause& cl, bool pos) {
    FromList f = from_list(cl.lits);
    VarTypes vt = var_types(cl.lits);
    std::vector<std::string> lit_conds, ids;
    for (size_t i = 0; i < cl.lits.size(); ++i) {
      int ii = static_cast<int>(i);
      lit_conds.push_back(clause_cond(cl, f, ii, pos));
      if (!preds_[cl.lits[i].pred].immutable()) ids.push_back((cl.lits[i].positive ? "" : "-") + alias(ii) + ".atom");
    }
    std::vector<std::string> conds = conditions(cl, f, vt, pos);
    std::string w;
    if (cl.weight_var.empty()) {
      w = num_sql(cl.hard && cl.weight == 0 ? kHardWeight : cl.weight);
    } else {
      const std::string& c = f.vars.at(cl.weight_var);
      w = vt.at(cl.weight_var).second == TypeKind::Int ? "(" + c + ")::float8" : symbol_name(c) + "::float8";
    }
    std::string arr = "ARRAY[" + join(ids, ", ") + "]::int4[]";
    std::string inner;
    if (cl.exist_vars.empty()) {
      std::vector<std::string> where = lit_conds;
      where.insert(where.end(), conds.begin(), conds.end());
      inner = "SELECT ARRAY(SELECT DISTINCT x FROM unnest(" + arr + ") AS x WHERE x IS NOT NULL ORDER BY x) AS l, " + w +
              " AS w FROM " + f.sql + " WHERE " + join(where, " AND ");
    } else {  // EXIST: one ground clause per group whose rows all pass
      std::vector<std::string> g = group_cols(cl, f);
      inner = "SELECT ARRAY(SELECT DISTINCT x FROM unnest(array_agg(" + arr +
              ")) AS x WHERE x IS NOT NULL ORDER BY x) AS l, " + (cl.weight_var.empty() ? w : "min(" + w + ")") +
              " AS w FROM " + f.sql + (conds.empty() ? "" : " WHERE " + join(conds, " AND ")) +
              (g.empty() ? "" : " GROUP BY " + join(g, ", ")) + " HAVING bool_and(" + join(lit_conds, " AND ") + ")";
    }
    const std::string flip = "cardinality(g.l) = 1 AND g.l[1] < 0";
    exec("INSERT INTO pg_temp.mln_sql_cbuf (lits, weight) SELECT CASE WHEN " + flip + " THEN ARRAY[-g.l[1]] ELSE g.l END, "
         "CASE WHEN " + flip + " THEN -g.w ELSE g.w END FROM (" + inner + ") AS g WHERE cardinality(g.l) > 0");
  }

  // Unit clauses of soft evidence (§5.6).
  void add_soft_evidence_clauses() {
    for (size_t p = 0; p < preds_.size(); ++p) {
      if (!preds_[p].has_soft) continue;
      exec("INSERT INTO pg_temp.mln_sql_cbuf (lits, weight) SELECT ARRAY[t.atom], CASE WHEN t.prior >= 1 THEN " +
           num_sql(kHardWeight) + " WHEN t.prior <= 0 THEN " + num_sql(-kHardWeight) +
           " ELSE ln(t.prior / (1 - t.prior)) END FROM " + tab(static_cast<int>(p)) +
           " AS t WHERE t.atom IS NOT NULL AND t.prior IS NOT NULL");
    }
  }

  // Key constraints (§5.7) over active atoms: each pair once, and existence clauses.
  void add_key_constraint_clauses() {
    for (size_t pi = 0; pi < preds_.size(); ++pi) {
      const lang::PredicateDecl& d = *preds_[pi].decl;
      if (!d.has_key_constraint()) continue;
      int p = static_cast<int>(pi);
      std::vector<std::string> on, keys;
      for (int k = 0; k < d.arity(); ++k) {
        if (d.dependent[k]) continue;
        on.push_back(col("x", k) + " = " + col("y", k));
        keys.push_back(col("x", k));
      }
      on.push_back("x.atom < y.atom");
      const std::string hw = num_sql(kHardWeight);
      exec("INSERT INTO pg_temp.mln_sql_cbuf (lits, weight) SELECT ARRAY[-y.atom, -x.atom], " + hw + " FROM " + tab(p) +
           " AS x JOIN " + tab(p) + " AS y ON " + join(on, " AND ") + " WHERE x.atom IS NOT NULL");
      exec("INSERT INTO pg_temp.mln_sql_cbuf (lits, weight) SELECT array_agg(x.atom ORDER BY x.atom), " + hw + " FROM " +
           tab(p) + " AS x WHERE x.atom IS NOT NULL" + (keys.empty() ? "" : " GROUP BY " + join(keys, ", ")) +
           " HAVING count(*) > 0");
    }
  }

  // Consolidation (§4.5): GROUP BY lits, SUM(weight).
  void consolidate() {
    exec("CREATE TEMP TABLE mln_sql_clauses ON COMMIT DROP AS SELECT lits, sum(weight) AS weight "
         "FROM pg_temp.mln_sql_cbuf GROUP BY lits");
  }

  // ---- read back ----

  void read_back(ground::GroundOutput& out) {
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

  Spi& spi_;
  const ProgramCtx& ctx_;
  const lang::Program& prog_;
  const ground::GroundInput& in_;
  const ground::GroundOptions& opts_;
  std::vector<PredInfo> preds_;
  std::map<std::string, int> type_index_;
  std::vector<uint8_t> relevant_;
  std::string symbols_;
};

}  // namespace

ground::GroundOutput ground_sql(Spi& spi, const ProgramCtx& ctx, const ground::GroundInput& in,
                                const ground::GroundOptions& opts) {
  return SqlGrounder(spi, ctx, in, opts).run();
}

}  // namespace mln::pg
