// The rule search (docs/rules.md, "Search"): Aleph's covering loop around a
// beam search.  Refinement adds one literal whose arguments are variables
// of the clause (of the column's type), new variables, or constants of a
// column with few values, at least one argument an existing variable so the
// clause stays linked.  Score: covered positives less covered negatives
// (Aleph's `coverage` evaluation); a rule is acceptable when it covers at
// least min_pos positives and at most `noise` negatives.  A refinement never
// covers more than its parent (adding a literal only removes bindings), so
// a node whose positives cannot beat the best acceptable score is pruned.
#include <algorithm>
#include <chrono>
#include <set>
#include <unordered_set>

#include "rules/rules.hpp"

namespace mln::rules {

namespace {

// The values a column offers as constants: its distinct values when they
// are at most max_constants, else none.
std::vector<std::vector<std::vector<int32_t>>> constant_columns(const Task& t, int max_constants) {
  std::vector<std::vector<std::vector<int32_t>>> out(t.background.size());
  for (size_t p = 0; p < t.background.size(); ++p) {
    const gpu::HostTable& rows = t.background[p].rows;
    out[p].resize(static_cast<size_t>(rows.ncols()));
    if (max_constants <= 0) continue;
    for (int c = 0; c < rows.ncols(); ++c) {
      std::set<int32_t> vals;
      for (int32_t v : rows.cols[static_cast<size_t>(c)]) {
        vals.insert(v);
        if (static_cast<int>(vals.size()) > max_constants) break;
      }
      if (static_cast<int>(vals.size()) <= max_constants) out[p][static_cast<size_t>(c)].assign(vals.begin(), vals.end());
    }
  }
  return out;
}

class Search {
 public:
  Search(const Task& t, const SearchOptions& o, CoverageEngine& ce, SearchStats& st)
      : t_(t), o_(o), ce_(ce), st_(st), consts_(constant_columns(t, o.max_constants)) {}

  // The best acceptable clause found from `root`, if any.
  bool best_from(const CoverageEngine::Node& root, int rule_no, CoverageEngine::Node& best);

 private:
  void refine(const CoverageEngine::Node& n, std::vector<Clause>& out) const;
  void fill(const Clause& base, int pred, const std::vector<int>& types, size_t col, Literal& lit,
            std::vector<int>& var_types, bool linked, std::vector<Clause>& out) const;
  static std::string key(const Clause& c);

  const Task& t_;
  const SearchOptions& o_;
  CoverageEngine& ce_;
  SearchStats& st_;
  std::vector<std::vector<std::vector<int32_t>>> consts_;
};

std::string Search::key(const Clause& c) {
  std::vector<std::string> lits;
  for (const Literal& l : c.body) {
    std::string s = std::to_string(l.pred) + "(";
    for (const Arg& a : l.args) s += (a.var >= 0 ? "v" + std::to_string(a.var) : "c" + std::to_string(a.value)) + ",";
    lits.push_back(s);
  }
  std::sort(lits.begin(), lits.end());
  std::string k;
  for (const std::string& s : lits) k += s + ")";
  return k;
}

// Every argument choice for columns col.. of `lit` (a literal of `pred`
// with column types `types`); new variables numbered in order of use.
void Search::fill(const Clause& base, int pred, const std::vector<int>& types, size_t col, Literal& lit,
                  std::vector<int>& var_types, bool linked, std::vector<Clause>& out) const {
  if (col == types.size()) {
    if (!linked) return;
    for (const Literal& l : base.body)
      if (l.pred == lit.pred && std::equal(l.args.begin(), l.args.end(), lit.args.begin(), [](const Arg& a, const Arg& b) {
            return a.var == b.var && (a.var >= 0 || a.value == b.value);
          }))
        return;  // already in the body
    if (pred == kTarget) {
      bool head = true;  // target(V0..Vk-1) itself: covers every positive trivially
      for (size_t i = 0; i < lit.args.size(); ++i) head = head && lit.args[i].var == static_cast<int>(i);
      if (head) return;
    }
    Clause c = base;
    c.body.push_back(lit);
    c.var_types = var_types;
    out.push_back(std::move(c));
    return;
  }
  const int ty = types[col];
  for (size_t v = 0; v < var_types.size(); ++v) {  // an existing variable (or one new in this literal)
    if (var_types[v] != ty) continue;
    lit.args[col] = Arg{static_cast<int>(v), 0};
    fill(base, pred, types, col + 1, lit, var_types, linked || v < base.var_types.size(), out);
  }
  if (static_cast<int>(var_types.size()) < o_.max_vars) {  // a new variable
    var_types.push_back(ty);
    lit.args[col] = Arg{static_cast<int>(var_types.size()) - 1, 0};
    fill(base, pred, types, col + 1, lit, var_types, linked, out);
    var_types.pop_back();
  }
  if (pred >= 0)
    for (int32_t value : consts_[static_cast<size_t>(pred)][col]) {
      lit.args[col] = Arg{-1, value};
      fill(base, pred, types, col + 1, lit, var_types, linked, out);
    }
}

void Search::refine(const CoverageEngine::Node& n, std::vector<Clause>& out) const {
  const int npred = static_cast<int>(t_.background.size());
  for (int p = o_.recursion ? -1 : 0; p < npred; ++p) {
    const int pred = p < 0 ? kTarget : p;
    const std::vector<int>& types = p < 0 ? t_.target.types : t_.background[static_cast<size_t>(p)].types;
    Literal lit;
    lit.pred = pred;
    lit.args.assign(types.size(), Arg{});
    std::vector<int> var_types = n.clause.var_types;
    fill(n.clause, pred, types, 0, lit, var_types, false, out);
  }
}

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
      refine(n, kids);
      for (const Clause& c : kids) {
        if (!seen.insert(key(c)).second) continue;
        const auto t0 = std::chrono::steady_clock::now();
        CoverageEngine::Node kid = ce_.extend(n, c);
        st_.coverage_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ++st_.candidates;
        ++evaluated;
        if (kid.cov.pos < o_.min_pos) continue;  // and so would every refinement of it
        const int64_t score = kid.cov.pos - kid.cov.neg;
        if (kid.cov.neg <= o_.noise && (!found || score > best_score)) {
          best = kid;
          best_score = score;
          found = true;
        }
        if (kid.cov.neg > 0) cands.push_back(std::move(kid));  // with no negative left, refining only loses positives
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

void check_options(const SearchOptions& o) {
  if (o.max_body < 1) throw TaskError("max_body must be at least 1");
  if (o.beam < 1) throw TaskError("beam must be at least 1");
  if (o.min_pos < 1) throw TaskError("min_pos must be at least 1");
  if (o.noise < 0) throw TaskError("noise must be at least 0");
  if (o.max_rules < 1) throw TaskError("max_rules must be at least 1");
}

}  // namespace

std::vector<LearnedRule> learn_rules(gpu::Engine& eng, const Task& task, const SearchOptions& opts,
                                     SearchStats* stats) {
  check_options(opts);
  if (opts.max_vars < static_cast<int>(task.target.types.size()))
    throw TaskError("max_vars (" + std::to_string(opts.max_vars) + ") is below the target's arity");
  SearchStats local;
  SearchStats& st = stats ? *stats : local;
  CoverageEngine ce(eng, task, opts.max_rows);
  Search search(task, opts, ce, st);
  std::vector<char> active(static_cast<size_t>(ce.num_pos()), 1);
  std::vector<LearnedRule> theory;
  while (static_cast<int>(theory.size()) < opts.max_rules) {
    const int64_t left = std::count(active.begin(), active.end(), 1);
    if (left < opts.min_pos) break;
    CoverageEngine::Node best;
    if (!search.best_from(ce.root(active), static_cast<int>(theory.size()), best)) break;
    std::vector<char> covered = ce.covered_pos(best);
    LearnedRule r;
    r.clause = best.clause;
    r.score = static_cast<double>(best.cov.pos - best.cov.neg);
    for (size_t i = 0; i < active.size(); ++i)
      if (covered[i] && active[i]) {
        active[i] = 0;
        ++r.new_pos;
      }
    if (r.new_pos == 0) break;
    r.on_all = ce.cover(r.clause, {});
    r.text = render(task, r.clause);
    theory.push_back(std::move(r));
  }
  return theory;
}

namespace {

std::string var_name(int v) {
  return v < 26 ? std::string(1, static_cast<char>('A' + v)) : "V" + std::to_string(v);
}

}  // namespace

std::string render(const Task& task, const Clause& c) {
  auto show = [&](int type, int32_t value) { return task.show ? task.show(type, value) : std::to_string(value); };
  std::string s = task.target.name + "(";
  for (size_t i = 0; i < task.target.types.size(); ++i) s += (i ? ", " : "") + var_name(static_cast<int>(i));
  s += ")";
  for (size_t l = 0; l < c.body.size(); ++l) {
    const Literal& lit = c.body[l];
    const Predicate& p = lit.pred == kTarget ? task.target : task.background[static_cast<size_t>(lit.pred)];
    s += (l ? ", " : " :- ") + p.name + "(";
    for (size_t i = 0; i < lit.args.size(); ++i)
      s += (i ? ", " : "") + (lit.args[i].var >= 0 ? var_name(lit.args[i].var) : show(p.types[i], lit.args[i].value));
    s += ")";
  }
  return s + ".";
}

}  // namespace mln::rules
