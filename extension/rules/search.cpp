// The rule search (docs/rules.md, "Search"): Aleph's covering loop around a
// beam search.  Refinement adds one literal whose arguments are variables
// of the clause (of the column's type), new variables, or constants of a
// column with few values, at least one argument an existing variable so the
// clause stays linked.  Score: covered positives less covered negatives
// (Aleph's `coverage` evaluation); a rule is acceptable when it covers at
// least min_pos positives and at most `noise` negatives, binds every head
// variable (mln.datalog runs no other) and is no tautology.  A refinement
// never covers more than its parent (adding a literal only removes
// bindings, and the fixpoint a target literal reads only shrinks), so a
// node whose positives cannot beat the best acceptable score is pruned.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <unordered_set>

#include "rules/fixpoint.hpp"
#include "rules/refine.hpp"

namespace mln::rules {

namespace {

class Search {
 public:
  Search(const Task& t, const SearchOptions& o, CoverageEngine& ce, SearchStats& st)
      : arity_(t.target.types.size()), o_(o), ce_(ce), st_(st), refiner_(t, o) {}

  // The best acceptable clause found from `root`, if any.
  bool best_from(const CoverageEngine::Node& root, int rule_no, CoverageEngine::Node& best);
  // A rule of the theory: one equal to it up to renaming is not found again.
  void take(const Clause& c) { taken_.insert(Refiner::key(c, arity_)); }

 private:
  // A rule mln.datalog runs as it is, and that says something.
  bool is_rule(const CoverageEngine::Node& n) const {
    return !n.bound_only && binds_head(n.clause, arity_) && !is_tautology(n.clause, arity_);
  }

  size_t arity_;
  const SearchOptions& o_;
  CoverageEngine& ce_;
  SearchStats& st_;
  Refiner refiner_;
  std::unordered_set<std::string> taken_;
};

bool Search::best_from(const CoverageEngine::Node& root, int rule_no, CoverageEngine::Node& best) {
  bool found = false;
  int64_t best_score = 0;
  std::vector<CoverageEngine::Node> beam{root};
  std::unordered_set<std::string> seen;
  for (int depth = 1; depth <= o_.max_body && !beam.empty(); ++depth) {
    std::vector<CoverageEngine::Node> cands;
    int64_t evaluated = 0;
    for (const CoverageEngine::Node& n : beam) {
      if (!n.refinable || (found && n.cov.pos <= best_score)) continue;  // no refinement can beat best
      std::vector<Clause> kids;
      refiner_.refine(n.clause, kids);
      for (const Clause& c : kids) {
        const std::string key = Refiner::key(c, arity_);
        if (!seen.insert(key).second || taken_.count(key)) continue;
        const auto t0 = std::chrono::steady_clock::now();
        CoverageEngine::Node kid = ce_.extend(n, c);
        st_.coverage_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ++st_.candidates;
        ++evaluated;
        if (kid.cov.pos < o_.min_pos) continue;  // and so would every refinement of it
        const int64_t score = kid.cov.pos - kid.cov.neg;
        const bool rule = is_rule(kid);
        if (rule && kid.cov.neg <= o_.noise && (!found || score > best_score)) {
          best = kid;
          best_score = score;
          found = true;
        }
        // With no negative left, refining a rule only loses positives; a
        // body that does not bind the head yet is refined to bind it.
        if (kid.cov.neg > 0 || !rule) cands.push_back(std::move(kid));
      }
    }
    if (o_.progress) o_.progress(rule_no, depth, evaluated);
    std::stable_sort(cands.begin(), cands.end(), [](const CoverageEngine::Node& a, const CoverageEngine::Node& b) {
      const int64_t sa = a.cov.pos - a.cov.neg, sb = b.cov.pos - b.cov.neg;
      return sa != sb ? sa > sb : a.cov.pos > b.cov.pos;
    });
    if (static_cast<int>(cands.size()) > o_.beam) cands.resize(static_cast<size_t>(o_.beam));
    beam = std::move(cands);
  }
  return found;
}

}  // namespace

void check_search_options(const SearchOptions& o, size_t arity) {
  if (o.max_body < 1) throw TaskError("max_body must be at least 1");
  if (o.beam < 1) throw TaskError("beam must be at least 1");
  if (o.min_pos < 1) throw TaskError("min_pos must be at least 1");
  if (o.noise < 0) throw TaskError("noise must be at least 0");
  if (o.max_rules < 1) throw TaskError("max_rules must be at least 1");
  if (o.max_vars < static_cast<int>(arity))
    throw TaskError("max_vars (" + std::to_string(o.max_vars) + ") is below the target's arity");
  if (!o.wpll) return;
  if (o.recursion) throw TaskError("recursion applies to the coverage search, not to wpll");
  if (!(o.min_gain >= 0) || !(o.l2 >= 0) || !(o.penalty >= 0))
    throw TaskError("min_gain, penalty and l2 must be at least 0");
}

// The covering loop.  With recursion a rule's positives are those the
// theory's fixpoint holds once it is added (a recursive rule read with an
// earlier one derives more than either alone), and each rule's coverage
// over all examples reads the whole theory's fixpoint, as mln.datalog runs
// it.
std::vector<LearnedRule> learn_rules(gpu::Engine& eng, const Task& task, const SearchOptions& opts,
                                     SearchStats* stats) {
  check_search_options(opts, task.target.types.size());
  SearchStats local;
  SearchStats& st = stats ? *stats : local;
  CoverageEngine ce(eng, task, opts.max_rows);
  Search search(task, opts, ce, st);
  std::vector<char> active(static_cast<size_t>(ce.num_pos()), 1);
  std::vector<LearnedRule> theory;
  std::vector<Clause> clauses;
  while (static_cast<int>(theory.size()) < opts.max_rules) {
    const int64_t left = std::count(active.begin(), active.end(), 1);
    if (left < opts.min_pos) break;
    CoverageEngine::Node best;
    if (!search.best_from(ce.root(active), static_cast<int>(theory.size()), best)) break;
    std::vector<char> covered = ce.covered_pos(best);
    clauses.push_back(best.clause);
    if (opts.recursion) {
      if (!ce.set_theory(clauses)) break;  // its fixpoint passes max_rows
      covered = ce.derived_pos();
    }
    LearnedRule r;
    r.clause = best.clause;
    r.score = static_cast<double>(best.cov.pos - best.cov.neg);
    for (size_t i = 0; i < active.size(); ++i)
      if (covered[i] && active[i]) {
        active[i] = 0;
        ++r.new_pos;
      }
    if (r.new_pos == 0) break;
    r.text = render(task, r.clause);
    search.take(r.clause);
    theory.push_back(std::move(r));
  }
  clauses.resize(theory.size());
  if (opts.recursion && !ce.set_theory(clauses)) throw TaskError("the theory's fixpoint passes max_rows (internal)");
  for (LearnedRule& r : theory) r.on_all = ce.cover(r.clause, {});
  return theory;
}

namespace {

// Variables A, B, ... (Datalog), a, b, ... (MLN), then V26, v26, ...
std::string var_name(int v, bool mln = false) {
  if (v >= 26) return (mln ? "v" : "V") + std::to_string(v);
  return std::string(1, static_cast<char>((mln ? 'a' : 'A') + v));
}

std::string atom_text(const Task& task, const Literal& lit, bool mln) {
  const Predicate& p = lit.pred == kTarget ? task.target : task.background[static_cast<size_t>(lit.pred)];
  std::string s = p.name + "(";
  for (size_t i = 0; i < lit.args.size(); ++i) {
    const Arg& a = lit.args[i];
    s += (i ? ", " : "") +
         (a.var >= 0 ? var_name(a.var, mln) : task.show ? task.show(p.types[i], a.value) : std::to_string(a.value));
  }
  return s + ")";
}

Literal head_literal(const Task& task) {
  Literal h;
  h.pred = kTarget;
  for (size_t i = 0; i < task.target.types.size(); ++i) h.args.push_back(Arg{static_cast<int>(i), 0});
  return h;
}

}  // namespace

std::string render(const Task& task, const Clause& c) {
  std::string s = atom_text(task, head_literal(task), false);
  for (size_t l = 0; l < c.body.size(); ++l) s += (l ? ", " : " :- ") + atom_text(task, c.body[l], false);
  return s + ".";
}

std::string render_formula(const Task& task, const Clause& c) {
  std::string s;
  for (size_t l = 0; l < c.body.size(); ++l) s += (l ? " ^ " : "") + atom_text(task, c.body[l], true);
  return s + (c.body.empty() ? "" : " => ") + atom_text(task, head_literal(task), true);
}

std::string render_mln(const Task& task, const Clause& c, double weight) {
  char w[32];
  std::snprintf(w, sizeof w, "%.4f ", weight);
  return w + render_formula(task, c);
}

}  // namespace mln::rules
