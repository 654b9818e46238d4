// One Datalog rule as operators (docs/datalog.md): each positive atom
// becomes a relation of its variables (constants and repeated variables
// selected away), the atoms are joined smallest first (greedy: the smallest
// atom that shares a variable with what is joined), each comparison is
// applied as soon as its variables are bound (the engine's select where it
// compares a variable with a variable or a constant, else on the host), the
// negated atoms are anti-joins, and the head is a projection, or, where it
// holds an aggregate, a grouping of the body's distinct bindings on the host.
// A join whose output would pass split_rows (the engine's 2^31-1 rows at
// most) is never materialised: the engine counts it (join_at_most), and the
// rule's rest runs on pieces of one side, their results merged (below).
#include <algorithm>
#include <climits>
#include <map>
#include <string>

#include "ground/datalog_eval.hpp"

namespace mln::ground::datalog {

namespace detail {

using dl::Cmp;
using dl::Expr;
using dl::Term;

namespace {

int32_t checked(int64_t v) {
  if (v < INT_MIN || v > INT_MAX) throw ArithmeticError("integer out of range");
  return static_cast<int32_t>(v);
}

}  // namespace

int32_t eval_expr(const Expr& e, const std::function<int32_t(int)>& var_value) {
  if (e.op == 0) return e.leaf.kind == Term::Kind::Var ? var_value(e.leaf.var) : static_cast<int32_t>(e.leaf.ival);
  const int64_t a = eval_expr(e.kids[0], var_value);
  if (e.op == 'n') return checked(-a);
  const int64_t b = eval_expr(e.kids[1], var_value);
  switch (e.op) {
    case '+': return checked(a + b);
    case '-': return checked(a - b);
    case '*': return checked(a * b);
    default:
      if (b == 0) throw ArithmeticError("division by zero");
      return checked(e.op == '/' ? a / b : a % b);
  }
}

bool eval_cmp(Cmp op, int32_t a, int32_t b) {
  switch (op) {
    case Cmp::Eq: return a == b;
    case Cmp::Ne: return a != b;
    case Cmp::Lt: return a < b;
    case Cmp::Le: return a <= b;
    case Cmp::Gt: return a > b;
    case Cmp::Ge: return a >= b;
  }
  return false;
}

size_t next_atom(const std::vector<std::vector<int>>& vars, const std::vector<double>& rows,
                 const std::vector<char>* bound) {
  size_t best = vars.size();
  for (int pass = 0; pass < 2 && best == vars.size(); ++pass)
    for (size_t i = 0; i < vars.size(); ++i) {
      bool shares = !bound || pass == 1;
      if (!shares)
        for (int v : vars[i]) shares = shares || (*bound)[static_cast<size_t>(v)];
      if (shares && (best == vars.size() || rows[i] < rows[best])) best = i;
    }
  return best;
}

namespace {

// Rows whose column i holds variable vars[i].  `unit`: one row of no
// columns (a rule with no positive atom before its first assignment).
struct Bound {
  gpu::Relation rel;
  std::vector<int> vars;
  bool unit = false;
  int col(int v) const {
    auto it = std::find(vars.begin(), vars.end(), v);
    return it == vars.end() ? -1 : static_cast<int>(it - vars.begin());
  }
  size_t rows() const { return unit ? 1 : rel.rows(); }
};

class RuleEval {
 public:
  RuleEval(gpu::Engine& eng, const dl::Program& p, const dl::Rule& r, uint64_t max_rows, uint64_t split_rows)
      : eng_(eng), p_(p), r_(r), max_rows_(max_rows), split_rows_(std::max<uint64_t>(split_rows, 1)),
        done_(r.cmps.size(), 0) {}

  gpu::Relation run(const std::vector<gpu::Relation>& full, const std::vector<gpu::Relation>& delta, int delta_atom) {
    const int arity = p_.rels[r_.head.rel].arity;
    full_ = &full;
    std::vector<Bound> atoms;
    for (size_t k = 0; k < r_.pos.size(); ++k) {
      const dl::Atom& a = r_.pos[k];
      Bound b = bind(a, static_cast<int>(k) == delta_atom ? delta[a.rel] : full[a.rel]);
      if (b.rows() == 0) return eng_.empty(arity);
      if (b.unit) continue;  // an atom without variables that holds: true
      atoms.push_back(std::move(b));
    }
    Bound cur;
    cur.unit = true;
    if (!atoms.empty()) cur = take(atoms, nullptr);
    if (!apply_ready(cur)) return eng_.empty(arity);
    Bound out = chain(std::move(cur), std::move(atoms));
    if (!r_.aggregates()) return out.rel;
    return out.rows() == 0 ? eng_.empty(arity) : aggregate(out);
  }

 private:
  gpu::Engine& eng_;
  const dl::Program& p_;
  const dl::Rule& r_;
  uint64_t max_rows_;
  uint64_t split_rows_;  // most rows of a join's output materialised at once (>= 1; see piece_rows)
  std::vector<char> done_;  // comparisons applied
  const std::vector<gpu::Relation>* full_ = nullptr;
  std::vector<Bound> neg_;  // the negated atoms bound, once a body reaches them
  bool neg_bound_ = false;

  // No row: what a rule (or a piece of it) gives when its body fails.
  Bound none() {
    Bound b;
    b.rel = eng_.empty(p_.rels[r_.head.rel].arity);
    return b;
  }

  // The rule's output from `cur` and the atoms still to join: head rows, or
  // for an aggregate head the body's distinct bindings (see finish).
  Bound chain(Bound cur, std::vector<Bound> atoms) {
    if (atoms.empty()) return finish(std::move(cur));
    Bound next = take(atoms, &cur);
    return join_rest(cur, next, atoms);
  }

  // chain() after joining l and r; in pieces where the join passes piece_rows().
  Bound join_rest(const Bound& l, const Bound& r, const std::vector<Bound>& atoms) {
    uint64_t n = 0, cap = 0;
    Bound o = join(l, r, &n, &cap);
    if (!o.rel.impl()) return in_pieces(l, r, atoms, n, cap);
    if (!apply_ready(o)) return none();
    return chain(std::move(o), atoms);
  }

  // l joined with r would hold n > cap rows (piece_rows): the rule's rest runs on
  // row ranges of the left (probe) side, or of the right where the left is
  // one row (so that every split shrinks an input and 1 x 1 rows always
  // fit), each range's join counted again and split further where a skewed
  // key still passes (a hub's rows).  Ranges aim at half the threshold, so
  // that most fit at the first count.  Each piece starts from the same
  // applied comparisons; their outputs are merged without duplicates.
  Bound in_pieces(const Bound& l, const Bound& r, const std::vector<Bound>& atoms, uint64_t n, uint64_t cap) {
    const bool left = l.rows() > 1;
    const Bound& side = left ? l : r;
    const uint64_t rows = side.rows(), target = std::max<uint64_t>(cap / 2, 1);
    const uint64_t k = std::min<uint64_t>(rows, std::max<uint64_t>(2, (n + target - 1) / target));
    const std::vector<char> done = done_;
    PieceUnion merged(eng_, r_.at.line);
    Bound out;
    for (uint64_t i = 0; i < k; ++i) {
      Bound piece = side;
      piece.rel = eng_.slice(side.rel, rows * i / k, rows * (i + 1) / k - rows * i / k);
      done_ = done;
      Bound part = left ? join_rest(piece, r, atoms) : join_rest(l, piece, atoms);
      if (part.rows() == 0) continue;
      out.vars = part.vars;  // every piece binds the same variables, in finish's order
      merged.add(part.rel);
    }
    out.rel = merged.result();
    return out.rel.impl() ? out : none();
  }

  // The negated atoms as anti-joins, then the head: its rows, or for an
  // aggregate head the distinct bindings with their columns in variable
  // order (pieces joined in different orders then line up).
  Bound finish(Bound cur) {
    if (!neg_bound_) {
      for (const dl::Atom& a : r_.neg) neg_.push_back(bind(a, (*full_)[a.rel]));
      neg_bound_ = true;
    }
    for (const Bound& nb : neg_) {
      if (nb.rows() == 0) continue;
      // Safety binds a negated atom's variables, so a unit `cur` meets only
      // negated atoms without variables.
      if (nb.unit || cur.unit) return none();
      std::vector<int> lk;
      for (int v : nb.vars) lk.push_back(cur.col(v));
      std::vector<int> rk(nb.vars.size());
      for (size_t i = 0; i < rk.size(); ++i) rk[i] = static_cast<int>(i);
      cur.rel = eng_.anti_join(cur.rel, nb.rel, lk, rk);
      if (cur.rel.rows() == 0) return none();
    }
    Bound out;
    if (!r_.aggregates()) {
      out.rel = head(cur);
      return out;
    }
    out.vars = cur.vars;
    std::sort(out.vars.begin(), out.vars.end());
    std::vector<int> cols;
    for (int v : out.vars) cols.push_back(cur.col(v));
    out.rel = eng_.distinct(eng_.project(cur.rel, cols));
    return out;
  }

  // The most rows of a join's output (of `cols` columns) written at once:
  // split_rows_, and within the memory a piece lives in: the engine's budget
  // (on CUDA 80% of the free device memory), or on the CPU its host limit
  // (mln.cpu_memory_limit), over the bytes a row takes through the rest of
  // the rule: its columns written and copied once more by a comparison (2 x
  // 4 bytes a column), the join's row maps (8) and a distinct's hash (~32).
  uint64_t piece_rows(size_t cols) {
    const uint64_t dev = eng_.memory_budget_bytes(), host = eng_.host_memory_limit_bytes();
    const uint64_t budget = dev ? dev : host ? host : detail::host_memory_bytes();
    if (budget == 0) return split_rows_;
    return std::clamp<uint64_t>(budget / (8 * cols + 40), 1, split_rows_);
  }

  void limit(uint64_t rows, const char* what) const {
    if (max_rows_ && rows > max_rows_)
      throw LimitExceeded(std::string(what) + " the rule at line " + std::to_string(r_.at.line) + " has " +
                          std::to_string(rows) + " rows, above max_rows (" + std::to_string(max_rows_) + ")");
  }

  // The relation of an atom's variables: constants and repeated variables
  // selected, one column per distinct variable (distinct rows when columns
  // were dropped).  No variable: `unit` when a row matches.
  Bound bind(const dl::Atom& a, const gpu::Relation& rel) {
    std::vector<gpu::Predicate> preds;
    std::vector<int> cols;
    Bound b;
    for (size_t c = 0; c < a.args.size(); ++c) {
      const Term& t = a.args[c];
      gpu::Predicate pr;
      pr.col = static_cast<int>(c);
      if (t.is_const()) {
        pr.rhs_const = static_cast<int32_t>(t.ival);
        preds.push_back(pr);
      } else if (t.kind == Term::Kind::Var) {
        const int first = b.col(t.var);
        if (first >= 0) {
          pr.rhs_is_col = true;
          pr.rhs_col = cols[first];
          preds.push_back(pr);
        } else {
          b.vars.push_back(t.var);
          cols.push_back(static_cast<int>(c));
        }
      }
    }
    gpu::Relation sel = preds.empty() ? rel : eng_.select(rel, preds);
    if (b.vars.empty()) {
      b.unit = sel.rows() > 0;
      b.rel = sel;
      return b;
    }
    b.rel = eng_.project(sel, cols);
    if (cols.size() < a.args.size() && b.rel.rows() > 1) b.rel = eng_.distinct(b.rel);
    return b;
  }

  // Removes and returns the next atom to join (next_atom's rule).
  Bound take(std::vector<Bound>& atoms, const Bound* with) {
    std::vector<std::vector<int>> vars;
    std::vector<double> rows;
    for (const Bound& a : atoms) vars.push_back(a.vars), rows.push_back(static_cast<double>(a.rows()));
    std::vector<char> bound(r_.vars.size(), 0);
    if (with)
      for (int v : with->vars) bound[static_cast<size_t>(v)] = 1;
    const size_t best = next_atom(vars, rows, with ? &bound : nullptr);
    Bound b = std::move(atoms[best]);
    atoms.erase(atoms.begin() + static_cast<long>(best));
    return b;
  }

  // l joined with r; *n: its rows.  A null o.rel where they pass *cap (piece_rows)
  // (nothing materialised).  max_rows bounds the whole join, as without
  // pieces.
  Bound join(const Bound& l, const Bound& r, uint64_t* n, uint64_t* cap) {
    *n = r.rows();
    *cap = split_rows_;
    if (l.unit) return r;
    std::vector<int> lk, rk;
    std::vector<gpu::OutCol> out;
    Bound o;
    o.vars = l.vars;
    for (size_t c = 0; c < l.vars.size(); ++c) out.push_back({0, static_cast<int>(c)});
    for (size_t c = 0; c < r.vars.size(); ++c) {
      const int lc = l.col(r.vars[c]);
      if (lc >= 0) {
        lk.push_back(lc);
        rk.push_back(static_cast<int>(c));
      } else {
        out.push_back({1, static_cast<int>(c)});
        o.vars.push_back(r.vars[c]);
      }
    }
    if (lk.empty()) {
      *n = static_cast<uint64_t>(l.rows()) * r.rows();
      limit(*n, "a cross product in");
      *cap = piece_rows(o.vars.size());
      if (*n <= *cap) o.rel = cross(l, r, *n);
      return o;
    }
    size_t rows = 0;
    *cap = piece_rows(out.size());
    o.rel = eng_.join_at_most(l.rel, r.rel, lk, rk, out, *cap, &rows);
    *n = rows;
    limit(*n, "an intermediate result of");
    return o;
  }

  // A join without a shared variable (n rows), on the host (rare: a body of independent parts).
  gpu::Relation cross(const Bound& l, const Bound& r, uint64_t n) {
    gpu::HostTable a = eng_.download(l.rel), b = eng_.download(r.rel), o;
    o.cols.assign(a.ncols() + b.ncols(), {});
    for (auto& c : o.cols) c.reserve(n);
    for (size_t i = 0; i < a.rows(); ++i)
      for (size_t j = 0; j < b.rows(); ++j) {
        if (((i * b.rows() + j) & 0xFFFFF) == 0) eng_.poll_cancel();  // every 2^20 rows: a cancel stops it
        for (int c = 0; c < a.ncols(); ++c) o.cols[c].push_back(a.cols[c][i]);
        for (int c = 0; c < b.ncols(); ++c) o.cols[a.ncols() + c].push_back(b.cols[c][j]);
      }
    return eng_.upload(o);
  }

  bool bound_expr(const Expr& e, const Bound& b) const {
    if (e.op == 0) return e.leaf.kind != Term::Kind::Var || b.col(e.leaf.var) >= 0;
    for (const Expr& k : e.kids)
      if (!bound_expr(k, b)) return false;
    return true;
  }

  // The engine's form of a comparison, when it is variable-or-constant
  // against variable-or-constant with a variable on at least one side.
  bool engine_pred(const dl::Compare& c, const Bound& b, gpu::Predicate& pr) const {
    if (c.lhs.op != 0 || c.rhs.op != 0) return false;
    const Term &l = c.lhs.leaf, &r = c.rhs.leaf;
    static const gpu::CmpOp ops[] = {gpu::CmpOp::EQ, gpu::CmpOp::NE, gpu::CmpOp::LT,
                                     gpu::CmpOp::LE, gpu::CmpOp::GT, gpu::CmpOp::GE};
    static const gpu::CmpOp flipped[] = {gpu::CmpOp::EQ, gpu::CmpOp::NE, gpu::CmpOp::GT,
                                         gpu::CmpOp::GE, gpu::CmpOp::LT, gpu::CmpOp::LE};
    const int op = static_cast<int>(c.op);
    if (l.kind == Term::Kind::Var) {
      pr.col = b.col(l.var);
      pr.op = ops[op];
      pr.rhs_is_col = r.kind == Term::Kind::Var;
      if (pr.rhs_is_col) pr.rhs_col = b.col(r.var);
      else pr.rhs_const = static_cast<int32_t>(r.ival);
      return true;
    }
    if (r.kind != Term::Kind::Var) return false;
    pr.col = b.col(r.var);
    pr.op = flipped[op];
    pr.rhs_const = static_cast<int32_t>(l.ival);
    return true;
  }

  // Applies every comparison whose variables are bound, and every assignment
  // whose expression is, until none is left that can be.  False when no row
  // is left.
  bool apply_ready(Bound& b) {
    for (bool more = true; more;) {
      more = false;
      std::vector<gpu::Predicate> preds;
      std::vector<const dl::Compare*> host;
      for (size_t i = 0; i < r_.cmps.size(); ++i) {
        const dl::Compare& c = r_.cmps[i];
        if (done_[i] || c.assigns >= 0 || !bound_expr(c.lhs, b) || !bound_expr(c.rhs, b)) continue;
        gpu::Predicate pr;
        if (!b.unit && engine_pred(c, b, pr)) preds.push_back(pr);
        else host.push_back(&c);
        done_[i] = 1;
      }
      if (!preds.empty()) b.rel = eng_.select(b.rel, preds);
      const dl::Compare* assign = nullptr;
      for (size_t i = 0; i < r_.cmps.size() && !assign; ++i)
        if (!done_[i] && r_.cmps[i].assigns >= 0 && bound_expr(r_.cmps[i].lhs, b)) {
          assign = &r_.cmps[i];
          done_[i] = 1;
          more = true;
        }
      if (!host.empty() || assign) host_step(b, host, assign);
      if (b.rows() == 0) return false;
    }
    return true;
  }

  // Filters by `filters` and appends the assigned variable's column, on the
  // host.  Comparisons run before the assignment, so `X != 0, Y = 1 / X`
  // does not divide by zero.
  void host_step(Bound& b, const std::vector<const dl::Compare*>& filters, const dl::Compare* assign) {
    gpu::HostTable in;
    if (!b.unit) in = eng_.download(b.rel);
    const size_t n = b.rows();
    gpu::HostTable out;
    out.cols.assign(b.vars.size() + (assign ? 1 : 0), {});
    size_t row = 0, kept = 0;
    auto value = [&](int v) { return in.cols[static_cast<size_t>(b.col(v))][row]; };
    for (row = 0; row < n; ++row) {
      if ((row & 0xFFFF) == 0xFFFF) eng_.poll_cancel();  // every 65,536 rows
      bool keep = true;
      for (const dl::Compare* c : filters)
        keep = keep && eval_cmp(c->op, eval_expr(c->lhs, value), eval_expr(c->rhs, value));
      if (!keep) continue;
      ++kept;
      for (size_t c = 0; c < b.vars.size(); ++c) out.cols[c].push_back(in.cols[c][row]);
      if (assign) out.cols.back().push_back(eval_expr(assign->lhs, value));
    }
    if (assign) b.vars.push_back(assign->assigns);
    if (b.vars.empty()) {  // a unit filtered: it stays a unit when its row passed
      if (kept == 0) b.unit = false, b.rel = eng_.empty(1);
      return;
    }
    b.unit = false;
    b.rel = eng_.upload(out);
  }

  // An aggregate head, on the host (the engine has no group-by): `b`, the
  // distinct bindings of the body's variables (finish), grouped by the
  // head's other variables; count, sum, min and max per group.  No binding:
  // no group.
  gpu::Relation aggregate(const Bound& b) {
    const auto& args = r_.head.args;
    gpu::HostTable in = eng_.download(b.rel);
    std::vector<int> cols, keys, aggs;  // cols: per argument, its column in `in` (-1: a constant)
    for (size_t c = 0; c < args.size(); ++c) {
      cols.push_back(args[c].kind == Term::Kind::Var ? b.col(args[c].var) : -1);
      if (args[c].agg != dl::Agg::None) aggs.push_back(static_cast<int>(c));
      else if (cols.back() >= 0) keys.push_back(static_cast<int>(c));
    }
    std::map<std::vector<int32_t>, std::vector<int64_t>> groups;  // key values -> one accumulator per aggregate
    std::vector<int32_t> key(keys.size());
    for (size_t i = 0; i < in.rows(); ++i) {
      for (size_t k = 0; k < keys.size(); ++k) key[k] = in.cols[static_cast<size_t>(cols[keys[k]])][i];
      auto [it, fresh] = groups.try_emplace(key, aggs.size(), 0);
      for (size_t a = 0; a < aggs.size(); ++a) {
        const int64_t v = in.cols[static_cast<size_t>(cols[aggs[a]])][i];
        int64_t& acc = it->second[a];
        switch (args[aggs[a]].agg) {
          case dl::Agg::Count: ++acc; break;
          case dl::Agg::Sum: acc += v; break;
          case dl::Agg::Min: acc = fresh || v < acc ? v : acc; break;
          default: acc = fresh || v > acc ? v : acc; break;
        }
      }
    }
    gpu::HostTable out;
    out.cols.assign(args.size(), {});
    for (const auto& [k, acc] : groups) {
      size_t ki = 0, ai = 0;
      for (size_t c = 0; c < args.size(); ++c)
        out.cols[c].push_back(args[c].agg != dl::Agg::None ? checked(acc[ai++])
                              : cols[c] >= 0                ? k[ki++]
                                                            : static_cast<int32_t>(args[c].ival));
    }
    return eng_.upload(out);
  }

  // The head's columns: a projection, or built on the host where the head
  // holds constants (or the rule bound no variable).
  gpu::Relation head(const Bound& b) {
    const auto& args = r_.head.args;
    bool all_vars = !b.unit;
    std::vector<int> cols;
    for (const Term& t : args) {
      all_vars = all_vars && t.kind == Term::Kind::Var;
      cols.push_back(t.kind == Term::Kind::Var ? b.col(t.var) : -1);
    }
    if (all_vars) return eng_.project(b.rel, cols);
    gpu::HostTable in, out;
    if (!b.unit) in = eng_.download(b.rel);
    const size_t n = b.rows();
    out.cols.assign(args.size(), std::vector<int32_t>(n));
    for (size_t c = 0; c < args.size(); ++c)
      for (size_t i = 0; i < n; ++i)
        out.cols[c][i] = cols[c] >= 0 ? in.cols[static_cast<size_t>(cols[c])][i] : static_cast<int32_t>(args[c].ival);
    return eng_.upload(out);
  }
};

}  // namespace

gpu::Relation eval_rule(gpu::Engine& eng, const dl::Program& p, const dl::Rule& r,
                        const std::vector<gpu::Relation>& full, const std::vector<gpu::Relation>& delta,
                        int delta_atom, uint64_t max_rows, uint64_t split_rows) {
  return RuleEval(eng, p, r, max_rows, split_rows).run(full, delta, delta_atom);
}

}  // namespace detail

}  // namespace mln::ground::datalog
