// Coverage on the operator engine (docs/rules.md, "Coverage").  A clause's
// bindings are a relation (example index, variables...): the root holds the
// examples themselves, with the head's variables bound to their columns;
// each body literal is a join of the bindings with the literal's relation
// on the variables they share (a semi-join when the literal brings no new
// variable), so a refinement reuses its parent's bindings instead of
// re-proving its prefix: Aleph's coverage lists, held on the device.  A
// clause covers the examples whose index survives; the counts are a
// distinct and a selection, never a download of the bindings.
#include <algorithm>
#include <numeric>

#include "rules/rules.hpp"

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
  target_rows_ = upload_distinct(eng, task.pos.rows() > 0 ? task.pos : gpu::HostTable{std::vector<std::vector<int32_t>>(k)});
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
  return n;
}

// The literal's relation with constants selected, repeated variables
// equated, and one column per distinct variable (keep_cols: those
// variables, in order of first occurrence).
gpu::Relation CoverageEngine::literal_rows(const Literal& lit, std::vector<int>& keep_cols) {
  const gpu::Relation& base = lit.pred == kTarget ? target_rows_ : bg_.at(static_cast<size_t>(lit.pred));
  std::vector<gpu::Predicate> preds;
  std::vector<int> cols;
  keep_cols.clear();
  for (size_t i = 0; i < lit.args.size(); ++i) {
    const Arg& a = lit.args[i];
    gpu::Predicate p;
    p.col = static_cast<int>(i);
    if (a.var < 0) {
      p.rhs_const = a.value;
      preds.push_back(p);
      continue;
    }
    auto seen = std::find(keep_cols.begin(), keep_cols.end(), a.var);
    if (seen != keep_cols.end()) {
      p.rhs_is_col = true;
      p.rhs_col = cols[static_cast<size_t>(seen - keep_cols.begin())];
      preds.push_back(p);
      continue;
    }
    keep_cols.push_back(a.var);
    cols.push_back(static_cast<int>(i));
  }
  gpu::Relation r = preds.empty() ? base : eng_.select(base, preds);
  bool identity = cols.size() == lit.args.size();
  for (size_t i = 0; identity && i < cols.size(); ++i) identity = cols[i] == static_cast<int>(i);
  return identity ? r : eng_.project(r, cols);
}

CoverageEngine::Node CoverageEngine::extend(const Node& parent, const Clause& child) {
  const Literal& lit = child.body.back();
  const int old_vars = static_cast<int>(parent.clause.var_types.size());
  std::vector<int> vars;
  gpu::Relation rows = literal_rows(lit, vars);
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

Coverage CoverageEngine::cover(const Clause& c, const std::vector<char>& active_pos) {
  Node n = root(active_pos);
  Clause prefix;
  prefix.var_types = task_.target.types;
  for (const Literal& lit : c.body) {
    prefix.body.push_back(lit);
    int top = static_cast<int>(prefix.var_types.size()) - 1;
    for (const Arg& a : lit.args) top = std::max(top, a.var);
    prefix.var_types.assign(c.var_types.begin(), c.var_types.begin() + top + 1);
    n = extend(n, prefix);
  }
  return n.cov;
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
