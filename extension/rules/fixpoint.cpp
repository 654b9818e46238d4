// Least fixpoints of a theory of the target (fixpoint.hpp).  Semi-naive:
// the first round applies to the start facts every rule they are not
// closed under; each later round applies the recursive rules once per
// target literal, that literal reading the facts new in the round before
// and the others every fact, and keeps what is new, until nothing is.  A step joins a body's literals in an
// order that keeps each joined on a variable already bound where one is
// (a literal sharing none is a cross product, on the host: rare, a body of
// parts linked only through the head).
#include "rules/fixpoint.hpp"

#include <algorithm>

namespace mln::rules {

gpu::Relation literal_rows(gpu::Engine& eng, const gpu::Relation& base, const Literal& lit, std::vector<int>& vars) {
  std::vector<gpu::Predicate> preds;
  std::vector<int> cols;
  vars.clear();
  for (size_t i = 0; i < lit.args.size(); ++i) {
    const Arg& a = lit.args[i];
    gpu::Predicate p;
    p.col = static_cast<int>(i);
    if (a.var < 0) {
      p.rhs_const = a.value;
      preds.push_back(p);
      continue;
    }
    auto seen = std::find(vars.begin(), vars.end(), a.var);
    if (seen != vars.end()) {
      p.rhs_is_col = true;
      p.rhs_col = cols[static_cast<size_t>(seen - vars.begin())];
      preds.push_back(p);
      continue;
    }
    vars.push_back(a.var);
    cols.push_back(static_cast<int>(i));
  }
  gpu::Relation r = preds.empty() ? base : eng.select(base, preds);
  bool identity = cols.size() == lit.args.size();
  for (size_t i = 0; identity && i < cols.size(); ++i) identity = cols[i] == static_cast<int>(i);
  return identity ? r : eng.project(r, cols);
}

bool is_recursive(const Clause& c) {
  return std::any_of(c.body.begin(), c.body.end(), [](const Literal& l) { return l.pred == kTarget; });
}

bool binds_head(const Clause& c, size_t arity) {
  std::vector<char> bound(arity, 0);
  for (const Literal& l : c.body)
    for (const Arg& a : l.args)
      if (a.var >= 0 && static_cast<size_t>(a.var) < arity) bound[static_cast<size_t>(a.var)] = 1;
  return std::all_of(bound.begin(), bound.end(), [](char b) { return b != 0; });
}

bool is_tautology(const Clause& c, size_t arity) {
  for (const Literal& l : c.body) {
    if (l.pred != kTarget || l.args.size() != arity) continue;
    bool head = true;
    for (size_t i = 0; head && i < arity; ++i) head = l.args[i].var == static_cast<int>(i);
    if (head) return true;
  }
  return false;
}

Fixpoint::Fixpoint(gpu::Engine& eng, const std::vector<gpu::Relation>& background, size_t arity, uint64_t max_rows)
    : eng_(eng), bg_(background), arity_(arity), max_rows_(max_rows) {}

int Fixpoint::Bound::col(int v) const {
  auto it = std::find(vars.begin(), vars.end(), v);
  return it == vars.end() ? -1 : static_cast<int>(it - vars.begin());
}

gpu::Relation Fixpoint::empty() { return eng_.empty(static_cast<int>(arity_)); }

void Fixpoint::check(size_t rows) const {
  if (rows > max_rows_) throw FixpointTooLarge{};
}

gpu::Relation Fixpoint::cross(const Bound& l, const gpu::Relation& r) {
  check(l.rel.rows() * r.rows());
  gpu::HostTable a = eng_.download(l.rel), b = eng_.download(r), o;
  o.cols.assign(static_cast<size_t>(a.ncols() + b.ncols()), {});
  for (size_t i = 0; i < a.rows(); ++i) {
    eng_.poll_cancel();
    for (size_t j = 0; j < b.rows(); ++j) {
      for (int c = 0; c < a.ncols(); ++c) o.cols[static_cast<size_t>(c)].push_back(a.cols[static_cast<size_t>(c)][i]);
      for (int c = 0; c < b.ncols(); ++c)
        o.cols[static_cast<size_t>(a.ncols() + c)].push_back(b.cols[static_cast<size_t>(c)][j]);
    }
  }
  return eng_.upload(o);
}

Fixpoint::Bound Fixpoint::join(const Bound& l, const gpu::Relation& rows, const std::vector<int>& vars) {
  Bound o;
  o.vars = l.vars;
  std::vector<int> lk, rk;
  std::vector<gpu::OutCol> out;
  for (size_t c = 0; c < l.vars.size(); ++c) out.push_back({0, static_cast<int>(c)});
  for (size_t c = 0; c < vars.size(); ++c) {
    const int lc = l.col(vars[c]);
    if (lc >= 0) {
      lk.push_back(lc);
      rk.push_back(static_cast<int>(c));
    } else {
      out.push_back({1, static_cast<int>(c)});
      o.vars.push_back(vars[c]);
    }
  }
  if (lk.empty()) {
    o.rel = cross(l, rows);
    return o;
  }
  if (out.size() == l.vars.size()) {
    o.rel = eng_.semi_join(l.rel, rows, lk, rk);
    return o;
  }
  size_t n = 0;
  o.rel = eng_.join_at_most(l.rel, rows, lk, rk, out, max_rows_, &n);
  if (!o.rel.impl()) throw FixpointTooLarge{};
  return o;
}

gpu::Relation Fixpoint::step(const Clause& c, const gpu::Relation& full, const gpu::Relation& delta, int delta_at) {
  const size_t n = c.body.size();
  std::vector<char> done(n, 0);
  auto rows_of = [&](size_t i, std::vector<int>& vars) {
    const Literal& lit = c.body[i];
    const gpu::Relation& base = lit.pred != kTarget                  ? bg_.at(static_cast<size_t>(lit.pred))
                                : static_cast<int>(i) == delta_at ? delta
                                                                  : full;
    return literal_rows(eng_, base, lit, vars);
  };
  // The delta literal first (the fewest rows), else the body's first.
  size_t first = delta_at >= 0 ? static_cast<size_t>(delta_at) : 0;
  Bound b;
  b.rel = rows_of(first, b.vars);
  done[first] = 1;
  for (size_t joined = 1; joined < n; ++joined) {
    size_t next = n;
    for (size_t i = 0; i < n && next == n; ++i)
      if (!done[i])
        for (const Arg& a : c.body[i].args)
          if (a.var >= 0 && b.col(a.var) >= 0) next = i;
    if (next == n) next = static_cast<size_t>(std::find(done.begin(), done.end(), 0) - done.begin());
    std::vector<int> vars;
    gpu::Relation rows = rows_of(next, vars);
    b = join(b, rows, vars);
    done[next] = 1;
    if (b.rel.rows() == 0) return empty();
  }
  std::vector<int> head;
  for (size_t v = 0; v < arity_; ++v) {
    const int col = b.col(static_cast<int>(v));
    if (col < 0) throw TaskError("a rule's head variable is not bound by its body (internal)");
    head.push_back(col);
  }
  return eng_.distinct(eng_.project(b.rel, head));
}

gpu::Relation Fixpoint::derive(const std::vector<const Clause*>& rules, const gpu::Relation& start, size_t closed) {
  gpu::Relation facts = eng_.distinct(start);
  gpu::Relation delta = empty();
  for (size_t i = closed; i < rules.size(); ++i)
    if (!rules[i]->body.empty()) delta = eng_.union_all(delta, step(*rules[i], facts, facts, -1));
  for (;;) {
    delta = eng_.difference(delta, facts);
    if (delta.rows() == 0) return facts;
    facts = eng_.union_all(facts, delta);
    check(facts.rows());
    eng_.poll_cancel();
    gpu::Relation next = empty();
    for (const Clause* r : rules)
      for (size_t j = 0; j < r->body.size(); ++j)
        if (r->body[j].pred == kTarget)
          next = eng_.union_all(next, step(*r, facts, delta, static_cast<int>(j)));
    delta = next;
  }
}

}  // namespace mln::rules
