// Refinement (docs/rules.md, "Search"): every clause one literal longer.
// A literal's arguments are variables of the clause of the column's type,
// new variables (numbered in order of use, up to max_vars), or constants of
// a column with few values; at least one is a variable the clause already
// has, so it stays linked.  A literal already in the body, and the target
// over the head's own variables, are never offered.
#include <algorithm>
#include <set>

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

std::string Refiner::key(const Clause& c) {
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
