// Refinement (docs/rules.md, "Search"): every clause one literal longer.
// A literal's arguments are variables of the clause of the column's type,
// new variables (numbered in order of use, up to max_vars), or constants of
// a column with few values; at least one is a variable the clause already
// has, so it stays linked.  A literal already in the body, and the target
// over the head's own variables, are never offered.
#include <algorithm>
#include <set>
#include <string>

#include "rules/refine.hpp"

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

}  // namespace

Refiner::Refiner(const Task& t, const SearchOptions& o) : t_(t), o_(o), consts_(constant_columns(t, o.max_constants)) {}

namespace {

// A literal with the head's variables by number and every other one as
// `_`: what renaming the other variables leaves unchanged.
std::string literal_shape(const Literal& l, size_t arity) {
  std::string s = std::to_string(l.pred) + "(";
  for (const Arg& a : l.args)
    s += (a.var < 0 ? "c" + std::to_string(a.value) : static_cast<size_t>(a.var) < arity ? "h" + std::to_string(a.var) : "_") + ",";
  return s + ")";
}

// The body in this order, the variables past the head renumbered in order
// of first occurrence.
std::string body_text(const Clause& c, const std::vector<size_t>& order, size_t arity) {
  std::vector<int> rename(c.var_types.size(), -1);
  int next = static_cast<int>(arity);
  std::string k;
  for (size_t i : order) {
    k += std::to_string(c.body[i].pred) + "(";
    for (const Arg& a : c.body[i].args) {
      if (a.var < 0) {
        k += "c" + std::to_string(a.value) + ",";
        continue;
      }
      int v = a.var;
      if (static_cast<size_t>(v) >= arity) {
        int& r = rename.at(static_cast<size_t>(v));
        if (r < 0) r = next++;
        v = r;
      }
      k += "v" + std::to_string(v) + ",";
    }
    k += ")";
  }
  return k;
}

}  // namespace

// The least body_text over the orders of the body that sort its literals
// by shape: two clauses get one key exactly when they are equal up to the
// order of their literals and the names of their non-head variables (the
// orders tried are those that permute literals of one shape; past 720 of
// them, the sorted order alone, which only misses some equal pairs).
std::string Refiner::key(const Clause& c, size_t arity) {
  const size_t n = c.body.size();
  std::vector<std::string> shape(n);
  for (size_t i = 0; i < n; ++i) shape[i] = literal_shape(c.body[i], arity);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return shape[a] < shape[b]; });
  std::vector<std::pair<size_t, size_t>> groups;  // [begin, end) of equal shapes in `order`
  double orders = 1;
  for (size_t b = 0, e = 0; b < n; b = e) {
    for (e = b + 1; e < n && shape[order[e]] == shape[order[b]];) ++e;
    for (size_t f = 2; f <= e - b; ++f) orders *= static_cast<double>(f);
    if (e - b > 1) groups.emplace_back(b, e);
  }
  std::string best = body_text(c, order, arity);
  if (orders > 720) return best;
  // Every order: odometer over the groups, each stepping through its permutations.
  for (size_t g = 0; g < groups.size();) {
    auto first = order.begin() + static_cast<std::ptrdiff_t>(groups[g].first);
    auto last = order.begin() + static_cast<std::ptrdiff_t>(groups[g].second);
    if (std::next_permutation(first, last)) {
      best = std::min(best, body_text(c, order, arity));
      g = 0;
    } else {
      ++g;  // this group is back to sorted order: carry into the next
    }
  }
  return best;
}

// Every argument choice for columns col.. of `lit` (a literal of `pred`
// with column types `types`); new variables numbered in order of use.
void Refiner::fill(const Clause& base, int pred, const std::vector<int>& types, size_t col, Literal& lit,
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

void Refiner::refine(const Clause& base, std::vector<Clause>& out) const {
  const int npred = static_cast<int>(t_.background.size());
  for (int p = o_.recursion ? -1 : 0; p < npred; ++p) {
    const int pred = p < 0 ? kTarget : p;
    const std::vector<int>& types = p < 0 ? t_.target.types : t_.background[static_cast<size_t>(p)].types;
    Literal lit;
    lit.pred = pred;
    lit.args.assign(types.size(), Arg{});
    std::vector<int> var_types = base.var_types;
    fill(base, pred, types, 0, lit, var_types, false, out);
  }
}

}  // namespace mln::rules
