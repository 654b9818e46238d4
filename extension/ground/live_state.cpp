// TupleIndex: a tuple set with lazily built indexes by bound positions.
#include <algorithm>

#include "ground/live_state.hpp"

namespace mln::ground::live {

uint64_t TupleIndex::project(uint32_t mask, const Tuple& t) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < t.size(); ++i)
    if (mask >> i & 1u) h = (h ^ static_cast<uint32_t>(t[i])) * 0x100000001B3ull + (h >> 31);
  return h;
}

TupleIndex::Buckets& TupleIndex::by(uint32_t mask) {
  auto it = masks_.find(mask);
  if (it != masks_.end()) return it->second;
  Buckets& b = masks_[mask];
  for (const Tuple& t : all_) b[project(mask, t)].push_back(t);
  return b;
}

void TupleIndex::insert(const Tuple& t) {
  if (!all_.insert(t).second) return;
  for (auto& [mask, b] : masks_) b[project(mask, t)].push_back(t);
}

void TupleIndex::erase(const Tuple& t) {
  if (all_.erase(t) == 0) return;
  for (auto& [mask, b] : masks_) {
    auto it = b.find(project(mask, t));
    if (it == b.end()) continue;
    std::vector<Tuple>& v = it->second;
    auto at = std::find(v.begin(), v.end(), t);
    if (at != v.end()) {
      *at = std::move(v.back());
      v.pop_back();
    }
    if (v.empty()) b.erase(it);
  }
}

void TupleIndex::for_each_match(uint32_t mask, const Tuple& key, const std::function<void(const Tuple&)>& f) {
  if (mask == 0) {
    for (const Tuple& t : all_) f(t);
    return;
  }
  if ((mask & ((1u << key.size()) - 1)) == (1u << key.size()) - 1) {  // every position bound: one lookup
    if (all_.count(key)) f(key);
    return;
  }
  Buckets& b = by(mask);
  auto it = b.find(project(mask, key));
  if (it == b.end()) return;
  for (const Tuple& t : it->second) {
    bool same = true;
    for (size_t i = 0; i < key.size() && same; ++i) same = !(mask >> i & 1u) || t[i] == key[i];
    if (same) f(t);
  }
}

}  // namespace mln::ground::live
