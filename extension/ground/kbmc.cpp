// KBMC (reference §5.3) on the operator engine: the shared pattern search
// (kbmc_search.hpp), then materialisation of the relevant patterns as cross
// products of type domains anti-joined against the tuples already present.
#include <algorithm>
#include <cmath>

#include "ground/internal.hpp"
#include "ground/kbmc_search.hpp"

namespace mln::ground::detail {
namespace {

using kbmc::dimension;
using kbmc::is_var;
using kbmc::kConst;
using kbmc::Pattern;

// Whether a type's domain holds each value once.
bool domain_is_distinct(const Ctx& c, const std::string& type) {
  auto d = c.domains.find(type);
  if (d == c.domains.end()) return true;
  std::vector<int32_t> v = d->second;
  std::sort(v.begin(), v.end());
  return std::adjacent_find(v.begin(), v.end()) == v.end();
}

// Materialises patterns of predicate p: cross products of domains, minus present tuples.
void materialise(Ctx& c, int p, const std::vector<Pattern>& pats) {
  PredState& s = c.preds[p];
  const lang::PredicateDecl& d = *s.decl;
  std::vector<gpu::Relation> parts;
  for (const Pattern& t : pats) {
    gpu::Relation r = c.unit;  // [zero, v1, v2, ..., constants...]
    int dim = dimension(t);
    int ncols = 1;
    for (int v = 1; v <= dim; ++v) {
      size_t pos = std::find(t.begin(), t.end(), v) - t.begin();
      std::vector<gpu::OutCol> out;
      for (int i = 0; i < ncols; ++i) out.push_back({0, i});
      out.push_back({1, 1});
      r = c.eng.join(r, c.domain(d.arg_types[pos]), {0}, {0}, out);
      ++ncols;
    }
    std::vector<int> proj;
    for (size_t i = 0; i < t.size(); ++i) {
      if (is_var(t[i])) { proj.push_back(static_cast<int>(t[i])); continue; }
      gpu::HostTable k;
      k.cols = {{0}, {static_cast<int32_t>(t[i] - kConst)}};
      std::vector<gpu::OutCol> out;
      for (int j = 0; j < ncols; ++j) out.push_back({0, j});
      out.push_back({1, 1});
      r = c.eng.join(r, c.eng.upload(k), {0}, {0}, out);
      proj.push_back(ncols++);
    }
    parts.push_back(c.eng.project(r, proj));
  }
  if (parts.empty()) return;
  gpu::Relation u = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) u = c.eng.union_all(u, parts[i]);
  // One pattern over domains without repeats has none (a row is its
  // variables' values): a query's whole domain is not sorted again for it.
  bool repeats = parts.size() > 1;
  for (int a = 0; a < s.arity && !repeats; ++a) repeats = !domain_is_distinct(c, d.arg_types[a]);
  if (repeats) u = c.eng.distinct(u);
  std::vector<int> keys(s.arity);
  for (int i = 0; i < s.arity; ++i) keys[i] = i;
  gpu::Relation fresh = s.rows() == 0 ? u : c.eng.anti_join(u, c.full(p), keys, keys);
  gpu::HostTable h = c.eng.download(fresh);
  if (s.closed_world) c.append(p, std::move(h.cols), 0, 2, std::nan(""));  // false evidence
  else c.append(p, std::move(h.cols), -1, 0, std::nan(""));
}

}  // namespace

void compute_safe_ref_only(Ctx& c) {
  kbmc::PredicateUse u = kbmc::predicate_use(c.prog);
  for (size_t p = 0; p < c.preds.size(); ++p) {
    if (!u.safe_ref_only[p]) c.preds[p].safe_ref_only = false;
    if (u.scoped[p]) c.preds[p].scoped = true;
  }
}

void run_kbmc(Ctx& c, GroundOutput& out) {
  const size_t np = c.preds.size();
  std::vector<std::vector<std::vector<int32_t>>> queries(np);
  std::vector<uint8_t> no_need(np);
  for (size_t p = 0; p < np; ++p) {
    for (const auto& q : c.preds[p].queries) queries[p].push_back(q.args);
    no_need[p] = c.preds[p].no_need_to_ground() ? 1 : 0;
  }
  kbmc::SearchResult r = kbmc::search(c.prog, queries, no_need, [&c](const lang::Term& t, lang::TypeKind k) {
    return static_cast<int64_t>(c.constant_id(t, k));
  });
  for (size_t ci = 0; ci < r.relevant.size(); ++ci)
    if (r.relevant[ci]) c.relevant[ci] = 1;
  out.kbmc_patterns.insert(out.kbmc_patterns.end(), r.seeds.begin(), r.seeds.end());
  for (size_t p = 0; p < np; ++p) {
    c.progress("kbmc", static_cast<double>(p) / static_cast<double>(np));
    PredState& s = c.preds[p];
    if (s.scoped || s.no_need_to_ground()) continue;
    materialise(c, static_cast<int>(p), r.patterns[p]);
  }
}

}  // namespace mln::ground::detail
