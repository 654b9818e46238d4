// diff_networks (network_diff.hpp).
#include "ground/network_diff.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

namespace mln::ground {
namespace {


// A clause as bytes: its weight's bits, then its literals sorted (a
// consolidated clause's literals are a set; the order they are stored in
// is the grounding's).
void clause_bytes(const int32_t* lits, size_t n, double w, std::vector<int32_t>& tmp, std::string& out) {
  tmp.assign(lits, lits + n);
  std::sort(tmp.begin(), tmp.end());
  out.assign(reinterpret_cast<const char*>(&w), sizeof w);
  out.append(reinterpret_cast<const char*>(tmp.data()), tmp.size() * sizeof(int32_t));
}

void touch_literals(const std::string& bytes, std::vector<uint8_t>& touched) {
  const size_t n = (bytes.size() - sizeof(double)) / sizeof(int32_t);
  for (size_t i = 0; i < n; ++i) {
    int32_t l;
    std::memcpy(&l, bytes.data() + sizeof(double) + i * sizeof(int32_t), sizeof l);
    touched[static_cast<size_t>(std::abs(l))] = 1;
  }
}

}  // namespace

std::unordered_map<AtomKey, int32_t, AtomKeyHash> index_atoms(const std::vector<AtomKey>& keys) {
  std::unordered_map<AtomKey, int32_t, AtomKeyHash> id;
  id.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) id.emplace(keys[i], static_cast<int32_t>(i + 1));
  return id;
}

NetworkDiff diff_networks(const std::vector<AtomKey>& old_atoms, const mln::ClauseSet& old_clauses,
                          const std::vector<AtomKey>& new_atoms, const mln::ClauseSet& new_clauses) {
  NetworkDiff d;
  const auto new_id = index_atoms(new_atoms);
  std::vector<uint8_t> touched(new_atoms.size() + 1, 0), seen(new_atoms.size() + 1, 0);
  d.old_to_new.assign(old_atoms.size() + 1, 0);
  for (size_t i = 0; i < old_atoms.size(); ++i)
    if (auto it = new_id.find(old_atoms[i]); it != new_id.end()) {
      d.old_to_new[i + 1] = it->second;
      seen[static_cast<size_t>(it->second)] = 1;
    }
  for (size_t a = 1; a < touched.size(); ++a) touched[a] = !seen[a];  // a new atom touches itself
  // The old clauses over the new ids, as a multiset; a clause over an atom
  // that is gone touches the atoms that remain.
  std::unordered_map<std::string, int64_t> old_set;
  old_set.reserve(old_clauses.size());
  std::vector<int32_t> lits, tmp;
  std::string bytes;
  for (size_t c = 0; c < old_clauses.size(); ++c) {
    lits.clear();
    bool gone = false;
    for (int64_t k = old_clauses.offsets[c]; k < old_clauses.offsets[c + 1]; ++k) {
      const int32_t l = old_clauses.lits[k];
      const size_t a = static_cast<size_t>(std::abs(l));
      const int32_t b = a < d.old_to_new.size() ? d.old_to_new[a] : 0;
      if (b == 0) gone = true;
      else lits.push_back(l > 0 ? b : -b);
    }
    if (gone) {
      for (int32_t l : lits) touched[static_cast<size_t>(std::abs(l))] = 1;
      ++d.clauses_removed;
      continue;
    }
    clause_bytes(lits.data(), lits.size(), old_clauses.weights[c], tmp, bytes);
    ++old_set[bytes];
  }
  for (size_t c = 0; c < new_clauses.size(); ++c) {
    const int64_t b = new_clauses.offsets[c], e = new_clauses.offsets[c + 1];
    clause_bytes(&new_clauses.lits[b], static_cast<size_t>(e - b), new_clauses.weights[c], tmp, bytes);
    auto it = old_set.find(bytes);
    if (it != old_set.end() && it->second > 0) {
      --it->second;
      continue;
    }
    ++d.clauses_added;
    touch_literals(bytes, touched);
  }
  for (const auto& [k, n] : old_set)
    if (n > 0) {
      d.clauses_removed += n;
      touch_literals(k, touched);
    }
  for (size_t a = 1; a < touched.size(); ++a)
    if (touched[a]) d.touched.push_back(static_cast<int32_t>(a));
  return d;
}

}  // namespace mln::ground
