// Coverage on the operator engine (docs/rules.md, "Coverage").  A clause's
// bindings are a relation (example index, variables...): the root holds the
// examples themselves, with the head's variables bound to their columns;
// each body literal is a join of the bindings with the literal's relation
// on the variables they share (a semi-join when the literal brings no new
// variable), so a refinement reuses its parent's bindings instead of
// re-proving its prefix: Aleph's coverage lists, held on the device.  A
// clause covers the examples whose index survives; the counts are a
// distinct and a selection, never a download of the bindings.  A target
// literal reads the fixpoint of the theory so far and the candidate
// (fixpoint.hpp): a recursive candidate's parent read another one, so it is
// joined up from the root again.
#include <algorithm>
#include <numeric>

#include "rules/fixpoint.hpp"

namespace mln::rules {

namespace {

gpu::Relation upload_distinct(gpu::Engine& eng, const gpu::HostTable& t) {
  return eng.distinct(eng.upload(t));
}

}  // namespace

CoverageEngine::CoverageEngine(gpu::Engine& eng, const Task& task, uint64_t max_rows)
    : eng_(eng), task_(task), max_rows_(max_rows) {
  const int k = static_cast<int>(task.target.types.size());
  if (task.pos.ncols() != k || (task.neg.rows() > 0 && task.neg.ncols() != k))
    throw TaskError("the examples of \"" + task.target.name + "\" must have " + std::to_string(k) + " column(s)");
  for (const Predicate& p : task.background) {
    if (p.rows.ncols() != static_cast<int>(p.types.size()))
      throw TaskError("background relation \"" + p.name + "\" has rows of the wrong arity");
    bg_.push_back(upload_distinct(eng, p.rows));
  }
  npos_ = static_cast<int64_t>(task.pos.rows());
  gpu::HostTable ex;
  ex.cols.assign(static_cast<size_t>(k) + 1, {});
  const size_t n = task.pos.rows() + task.neg.rows();
  ex.cols[0].resize(n);
  std::iota(ex.cols[0].begin(), ex.cols[0].end(), 0);
  for (int c = 0; c < k; ++c) {
    auto& col = ex.cols[static_cast<size_t>(c) + 1];
    col = task.pos.cols[static_cast<size_t>(c)];
    if (task.neg.rows() > 0) col.insert(col.end(), task.neg.cols[c].begin(), task.neg.cols[c].end());
  }
  examples_ = eng.upload(ex);
  theory_facts_ = eng.empty(k);
}

bool CoverageEngine::set_theory(const std::vector<Clause>& theory) {
  std::vector<const Clause*> rules;
  for (const Clause& c : theory) rules.push_back(&c);
  Fixpoint fix(eng_, bg_, task_.target.types.size(), max_rows_);
  try {
    theory_facts_ = fix.derive(rules, fix.empty());
  } catch (const FixpointTooLarge&) {
    return false;
  }
  theory_ = theory;
  return true;
}

std::vector<char> CoverageEngine::derived_pos() {
  std::vector<int> cols(task_.target.types.size());
  std::iota(cols.begin(), cols.end(), 0);
  std::vector<int> ex_cols = cols;
  for (int& c : ex_cols) ++c;
  gpu::HostTable ids = eng_.download(eng_.project(eng_.semi_join(examples_, theory_facts_, ex_cols, cols), {0}));
  std::vector<char> out(static_cast<size_t>(npos_), 0);
  for (int32_t i : ids.cols[0])
    if (i < npos_) out[static_cast<size_t>(i)] = 1;
  return out;
}

Coverage CoverageEngine::count(const gpu::Relation& bindings) {
  gpu::Relation ids = eng_.distinct(eng_.project(bindings, {0}));
  gpu::Predicate is_pos;
  is_pos.col = 0;
  is_pos.op = gpu::CmpOp::LT;
  is_pos.rhs_const = static_cast<int32_t>(npos_);
  Coverage c;
  c.pos = static_cast<int64_t>(eng_.select(ids, {is_pos}).rows());
  c.neg = static_cast<int64_t>(ids.rows()) - c.pos;
  return c;
}

CoverageEngine::Node CoverageEngine::root(const std::vector<char>& active_pos) {
  Node n;
  n.clause.var_types = task_.target.types;
  // Inactive positives out: the indices kept are those of active_pos's set
  // flags and every negative.  Selected on the host (the list is the
  // examples' size, once per rule of the theory).
  gpu::HostTable keep;
  keep.cols.assign(1, {});
  for (int64_t i = 0; i < npos_; ++i)
    if (active_pos.empty() || active_pos[static_cast<size_t>(i)]) keep.cols[0].push_back(static_cast<int32_t>(i));
  for (size_t i = 0; i < task_.neg.rows(); ++i) keep.cols[0].push_back(static_cast<int32_t>(npos_ + i));
  n.bindings = eng_.semi_join(examples_, eng_.upload(keep), {0}, {0});
  n.cov = count(n.bindings);
  root_ = n;
  return n;
}

CoverageEngine::Node CoverageEngine::join_last(const Node& parent, const Clause& child, const gpu::Relation& target) {
  const Literal& lit = child.body.back();
  const int old_vars = static_cast<int>(parent.clause.var_types.size());
  std::vector<int> vars;
  gpu::Relation rows = literal_rows(eng_, lit.pred == kTarget ? target : bg_.at(static_cast<size_t>(lit.pred)), lit, vars);
  std::vector<int> lkeys, rkeys;
  std::vector<gpu::OutCol> out;
  for (int c = 0; c <= old_vars; ++c) out.push_back({0, c});
  std::vector<std::pair<int, int>> fresh;  // (variable, column of rows)
  for (size_t i = 0; i < vars.size(); ++i) {
    if (vars[i] < old_vars) {
      lkeys.push_back(vars[i] + 1);
      rkeys.push_back(static_cast<int>(i));
    } else {
      fresh.emplace_back(vars[i], static_cast<int>(i));
    }
  }
  if (lkeys.empty()) throw TaskError("a body literal must share a variable with the clause (internal)");
  std::sort(fresh.begin(), fresh.end());
  for (size_t i = 0; i < fresh.size(); ++i) {
    if (fresh[i].first != old_vars + static_cast<int>(i)) throw TaskError("new variables out of order (internal)");
    out.push_back({1, fresh[i].second});
  }
  Node n;
  n.clause = child;
  n.bindings = fresh.empty() ? eng_.semi_join(parent.bindings, rows, lkeys, rkeys)
                             : eng_.join(parent.bindings, rows, lkeys, rkeys, out);
  n.refinable = n.bindings.rows() <= max_rows_;
  n.cov = count(n.bindings);
  return n;
}

CoverageEngine::Node CoverageEngine::from_root(const Node& from, const Clause& c, const gpu::Relation& target) {
  Node n = from;
  Clause prefix;
  prefix.var_types = task_.target.types;
  for (const Literal& lit : c.body) {
    prefix.body.push_back(lit);
    int top = static_cast<int>(prefix.var_types.size()) - 1;
    for (const Arg& a : lit.args) top = std::max(top, a.var);
    prefix.var_types.assign(c.var_types.begin(), c.var_types.begin() + top + 1);
    const bool refinable = n.refinable;
    n = join_last(n, prefix, target);
    n.refinable = n.refinable && refinable;
  }
  n.clause = c;
  return n;
}

CoverageEngine::Node CoverageEngine::extend(const Node& parent, const Clause& child) {
  if (is_recursive(child)) return extend_recursive(parent, child);
  return join_last(parent, child, theory_facts_);
}

// The child's target literals read the fixpoint of the theory and the
// child, from the theory's own (which it holds).  A child whose head is
// not bound has none that is finite: it keeps its parent's coverage, a
// bound on its refinements' (a literal more never derives more, so never
// covers more), for the beam and the pruning; one whose fixpoint passes
// max_rows is given up (covers nothing, not refined).
CoverageEngine::Node CoverageEngine::extend_recursive(const Node& parent, const Clause& child) {
  Node n;
  n.clause = child;
  if (!binds_head(child, task_.target.types.size())) {
    n.bindings = parent.bindings;
    n.cov = parent.cov;
    n.refinable = parent.refinable;
    n.bound_only = true;
    return n;
  }
  std::vector<const Clause*> rules;
  for (const Clause& c : theory_) rules.push_back(&c);
  rules.push_back(&child);
  Fixpoint fix(eng_, bg_, task_.target.types.size(), max_rows_);
  gpu::Relation facts;
  try {
    facts = fix.derive(rules, theory_facts_, theory_.size());
  } catch (const FixpointTooLarge&) {
    n.bindings = eng_.empty(static_cast<int>(child.var_types.size()) + 1);
    n.refinable = false;
    return n;
  }
  return from_root(root_, child, facts);
}

Coverage CoverageEngine::cover(const Clause& c, const std::vector<char>& active_pos) {
  return from_root(root(active_pos), c, theory_facts_).cov;
}

std::vector<char> CoverageEngine::covered_pos(const Node& n) {
  gpu::HostTable ids = eng_.download(eng_.distinct(eng_.project(n.bindings, {0})));
  std::vector<char> out(static_cast<size_t>(npos_), 0);
  for (int32_t i : ids.cols[0])
    if (i < npos_) out[static_cast<size_t>(i)] = 1;
  return out;
}

std::vector<double> CoverageEngine::counts(const Node& n) {
  gpu::HostTable ids = eng_.download(eng_.project(n.bindings, {0}));
  std::vector<double> out(static_cast<size_t>(npos_) + task_.neg.rows(), 0.0);
  for (int32_t i : ids.cols[0]) out[static_cast<size_t>(i)] += 1.0;
  return out;
}

}  // namespace mln::rules
