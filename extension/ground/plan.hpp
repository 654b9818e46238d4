// Operator plans for clause bodies: Tuffy's FROM list (negative literals
// first, then positive; inner joins for literals that bind new variables;
// LEFT-JOIN semantics for positive literals whose variables are all bound)
// expressed as engine joins, semi-joins and anti-joins.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ground/internal.hpp"

namespace mln::ground::detail {

// What a plan joins a literal against.  Relations are literal views
// [args..., tid, zero] (see lit_view); constants are applied by the plan.
struct LiteralSets {
  enum class Use {
    Pass,       // inner join (new variables) or semi-join (all bound) with `pass`
    AntiFail,   // all bound & positive: keep bindings whose tuple is not in `fail`
    SkipBound,  // all bound: keep every binding (the join-only plan of EXIST)
  };
  Use use = Use::Pass;
  gpu::Relation pass;
  gpu::Relation fail;
};

// The sets one literal is evaluated against, from a predicate's per-phase
// sets (fields pos_pass, pos_fail, neg_pass_pos, neg_pass_neg; the closure
// and the active-clause phase fill them by their own condition tables).  A
// positive literal whose tuple is absent reads as false, so it only drops
// bindings whose tuple is true for sure -- except on a completely specified
// (**) predicate, where an absent tuple drops the binding.
template <class Sets>
LiteralSets literal_sets(const Sets& r, const lang::Literal& l, bool completely_specified, bool positive_clause) {
  LiteralSets s;
  if (l.positive) {
    s.pass = r.pos_pass;
    if (!completely_specified) {
      s.use = LiteralSets::Use::AntiFail;
      s.fail = r.pos_fail;
    }
  } else {
    s.pass = positive_clause ? r.neg_pass_pos : r.neg_pass_neg;
  }
  return s;
}

// The sets of the join-only plan of an EXIST clause: every row of the
// predicate's view, positive literals with bound variables kept as they are.
inline LiteralSets all_row_sets(const gpu::Relation& view, const lang::Literal& l) {
  LiteralSets s;
  s.pass = view;
  if (l.positive) s.use = LiteralSets::Use::SkipBound;
  return s;
}

// Literal view of a predicate relation in PredCols layout: [args..., tid, zero].
gpu::Relation lit_view(Ctx& c, const gpu::Relation& full, int pred);
// Rows of a literal view matching the literal's constants and repeated variables.
gpu::Relation restrict_literal(Ctx& c, const gpu::Relation& view, const lang::Literal& lit);
// Types of the variables of `lits` (from their first argument position).
VarTypes var_types(const Ctx& c, const std::vector<lang::Literal>& lits);
// Tuffy's literal order: negative literals first, then positive, each in written order.
std::vector<int> plan_order(const std::vector<lang::Literal>& lits);
// True when every variable of `lit` is already bound in `b`.
bool all_bound(const Bindings& b, const lang::Literal& lit);

// Runs a body plan (optionally keeping the tids of inner-joined literals): joins the literals in plan_order with the relations that
// `sets(i)` supplies and filters by `conds` as soon as their variables are
// bound.  The result has one row per surviving variable binding.  With
// `keep`, each step first drops the columns that neither a later literal, a
// pending condition nor a name in `keep` reads (the rows stay the same).
Bindings run_plan(Ctx& c, const std::vector<lang::Literal>& lits, const std::vector<lang::Expr>& conds,
                  const VarTypes& types, const std::function<LiteralSets(int)>& sets,
                  const std::vector<int>& order, bool carry_tids = false,
                  const std::vector<std::string>* keep = nullptr);
// Name of the pseudo-variable that holds literal i's tid when run_plan
// carries tids (inner-joined literals only).
std::string tid_var(int lit_index);

// Joins `b` with literal `lit` over `src` (a literal view): an inner join
// that adds the literal's unbound variables, or a semi/anti join.
enum class JoinMode { Inner, Semi, Anti };
// With carry_tid >= 0, an inner join also keeps the tuple's tid as tid_var(carry_tid).
void join_literal(Ctx& c, Bindings& b, const lang::Literal& lit, const gpu::Relation& src, JoinMode mode,
                  int carry_tid = -1);

// Literal views of the fixed evidence-derived subsets of a predicate table.
struct StaticSets {
  gpu::Relation view;      // every present tuple
  gpu::Relation ev_true;   // truth TRUE (hard true, and soft evidence as Tuffy stores it)
  gpu::Relation ev_false;  // truth FALSE
  gpu::Relation unknown;   // club < 2
  gpu::Relation prior;     // has a prior
};
StaticSets static_sets(Ctx& c, int pred);
// Literal view rows whose tid is in `tids` ([tid] relation).
gpu::Relation with_tids(Ctx& c, const gpu::Relation& view, int pred, const gpu::Relation& tids);
// Literal view rows whose tid is not in `tids`.
gpu::Relation without_tids(Ctx& c, const gpu::Relation& view, int pred, const gpu::Relation& tids);
// The rows of the predicate's whole literal view (lit_view of full(pred))
// whose tid `keep` accepts, in tid order: with_tids / without_tids of that
// view, built on the host from the predicate's columns.  A query
// predicate's view is its whole candidate domain; a semi- or anti-join
// would read all of it on the engine for a handful of rows.
gpu::Relation view_rows_where(Ctx& c, int pred, const std::function<bool(size_t)>& keep);
// The same for the tids of a [tid] relation.
gpu::Relation view_rows_of(Ctx& c, int pred, const gpu::Relation& tids);
// Whether every variable of literal i of `lits` is bound by the literals
// before it in `order` (run_plan then joins it all-bound: semi-, anti- or no
// join; conditions bind no variable).
bool bound_at(const std::vector<lang::Literal>& lits, const std::vector<int>& order, int i);
// Joins the bindings with a literal's tuples in `src` and returns the listed
// source columns (e.g. the tid) of the matches.
gpu::Relation literal_matches(Ctx& c, const Bindings& b, const lang::Literal& lit, const gpu::Relation& src,
                              const std::vector<int>& src_cols);
// The exist-free variable columns of `b` (the group key of an EXIST clause;
// column 0 when every variable is existential).
std::vector<int> group_columns(const Bindings& b, const std::vector<std::string>& exist_vars);

// EXIST semantics done right: drops every group (binding of the variables
// that are not existential) in which some row of the join-only plan `rows`
// is missing from `pass` (a literal instance true for sure satisfies the
// whole ground clause).
void drop_satisfied_groups(Ctx& c, Bindings& pass, const Bindings& rows,
                           const std::vector<std::string>& exist_vars);
// The clause's conditions plus, for embedded weights, `w > 0` or `w < 0`.
std::vector<lang::Expr> clause_conditions(const lang::Clause& cl, bool positive);

// Distinct union of relations with equal arity (empty list: `like` with no rows).
gpu::Relation union_distinct(Ctx& c, const std::vector<gpu::Relation>& rs, int ncols);

}  // namespace mln::ground::detail
