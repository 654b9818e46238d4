// The 'sql' grounding path's grounder (see sql_ground.hpp): one object per
// ground_sql() call, holding the per-predicate facts while its statements
// run.  Internal to sql_ground.cpp (orchestration, evidence, KBMC, rules,
// read back) and sql_ground_clauses.cpp (FROM lists, closure, clauses);
// conditions become SQL in sql_translate.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ground/kbmc_search.hpp"
#include "pg/sql_ground.hpp"
#include "pg/sql_translate.hpp"

namespace mln::pg::sql_ground_detail {

using lang::TypeKind;
using VarTypes = SqlVarTypes;

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

class SqlGrounder {
 public:
  SqlGrounder(Spi& spi, const ProgramCtx& ctx, const ground::GroundInput& in, const ground::GroundOptions& opts);
  // Runs every phase and reads the network back.
  ground::GroundOutput run();

 private:
  // Calls the caller's progress callback (which may cancel).
  void progress(const std::string& phase, double f) const {
    if (opts_.progress) opts_.progress(phase, f);
  }
  // "a0, a1, ..." (optionally alias-qualified).
  std::string cols(int p, const std::string& alias = "") const {
    std::vector<std::string> v;
    for (int k = 0; k < preds_[p].arity; ++k) v.push_back(alias.empty() ? "a" + std::to_string(k) : col(alias, k));
    return sql_join(v, ", ");
  }
  // "x.a0 = y.a0 AND ..." over every argument.
  std::string same_args(int p, const std::string& x, const std::string& y) const {
    std::vector<std::string> v;
    for (int k = 0; k < preds_[p].arity; ++k) v.push_back(col(x, k) + " = " + col(y, k));
    return sql_join(v, " AND ");
  }
  // Symbol id (or raw integer) of a constant term.
  int32_t constant_id(const lang::Term& t, TypeKind kind) const {
    return ground::rule_constant_id(t, kind, in_.symbols);
  }
  // Index of a type in mln_sql_dom (-1: no domain, e.g. numeric types).
  int type_of(const std::string& type) const {
    auto it = type_index_.find(type);
    return it == type_index_.end() ? -1 : it->second;
  }
  // OR of a literal's pass conditions; absent tuples of LEFT JOINed literals pass.
  static std::string any_of(const std::vector<std::string>& parts, bool left, const std::string& a) {
    std::string s = parts.empty() ? "false" : sql_join(parts, " OR ");
    return left ? "(" + a + ".id IS NULL OR " + s + ")" : "(" + s + ")";
  }
  std::string tab(int p) const { return "pg_temp.mln_sql_p" + std::to_string(p); }
  std::string act(int p) const { return "pg_temp.mln_sql_act" + std::to_string(p); }
  static std::string col(const std::string& alias, int k) { return alias + ".a" + std::to_string(k); }
  std::string alias(int i) const { return "t" + std::to_string(i); }
  std::string active_sql(int p, const std::string& a) const { return a + ".id IN (SELECT id FROM " + act(p) + ")"; }
  // The clause's conditions as SQL over the FROM list's bindings.
  std::vector<std::string> conditions(const lang::Clause& cl, const FromList& f, const VarTypes& vt, bool pos) const {
    return clause_conditions_sql(cl, SqlScope{f.vars, vt, symbols_, in_.symbols}, pos);
  }

  // ---- Statements, names, phases (sql_ground.cpp) ----
  uint64_t exec(const std::string& sql, const std::vector<Param>& params = {});
  void check_supported() const;
  void create_tables();
  void drop_tables();
  void load_evidence();
  void refresh_has_soft(int p);
  void analyze();
  void compute_safe_ref_only();
  void run_kbmc(ground::GroundOutput& out);
  void materialise(int p, const std::vector<ground::kbmc::Pattern>& pats);
  void run_rule(const lang::Rule& r);
  void run_rules();
  void mark_queries();
  void read_back(ground::GroundOutput& out);

  // ---- FROM lists and literal conditions (sql_ground_clauses.cpp) ----
  VarTypes var_types(const std::vector<lang::Literal>& lits) const;
  static std::vector<int> plan_order(const std::vector<lang::Literal>& lits);
  bool all_bound(const FromList& f, const lang::Literal& l) const;
  std::string join_on(FromList& f, const lang::Literal& l, const std::string& alias, bool bind) const;
  FromList from_list(const std::vector<lang::Literal>& lits) const;
  std::string closure_cond(const lang::Clause& cl, const FromList& f, int i, bool pos) const;
  std::vector<std::string> unknown_parts(int p, const std::string& a) const;
  std::string clause_cond(const lang::Clause& cl, const FromList& f, int i, bool pos) const;
  std::vector<std::string> group_cols(const lang::Clause& cl, const FromList& f) const;

  // ---- Closure, atoms, clauses, consolidation (sql_ground_clauses.cpp) ----
  int closure();
  bool more_to_ground() const;
  void closure_clause(const lang::Clause& cl, bool pos, bool first_round, const std::vector<uint8_t>& changed);
  void activate_all();
  void build_atom_table();
  void ground_active_clauses();
  void ground_clause(const lang::Clause& cl, bool pos);
  void add_soft_evidence_clauses();
  void add_key_constraint_clauses();
  void consolidate();

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

}  // namespace mln::pg::sql_ground_detail
