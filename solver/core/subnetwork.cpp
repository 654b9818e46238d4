// Sub-network extraction with local atom ids and fixed foreign atoms.
#include "subnetwork.hpp"

#include <algorithm>
#include <stdexcept>

namespace mln::solver {

SubNetwork extract_subnetwork(const mln::Network& parent, const std::vector<int32_t>& atoms,
                              const int64_t* clauses, size_t num_clauses,
                              const std::vector<int32_t>& local_of, const std::vector<uint8_t>* fixed) {
  SubNetwork sub;
  sub.net.num_atoms = static_cast<int32_t>(atoms.size());
  sub.global.resize(atoms.size() + 1, 0);
  for (size_t i = 0; i < atoms.size(); ++i) sub.global[local_of[atoms[i]]] = atoms[i];
  const auto& cs = parent.clauses;
  std::vector<int32_t> buf;
  sub.net.clauses.weights.reserve(num_clauses);
  for (size_t j = 0; j < num_clauses; ++j) {
    int64_t c = clauses[j];
    double w = cs.weights[c];
    buf.clear();
    bool fixed_true = false;
    for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i) {
      int32_t l = cs.lits[i], a = l > 0 ? l : -l;
      int32_t loc = local_of[a];
      if (loc > 0) { buf.push_back(l > 0 ? loc : -loc); continue; }
      if (!fixed) throw std::invalid_argument("extract_subnetwork: foreign atom without fixed truth");
      if ((l > 0) == ((*fixed)[a] != 0)) { fixed_true = true; break; }
    }
    if (fixed_true || buf.empty()) {  // constant clause
      bool any_true = fixed_true;
      if (w > 0 && !any_true) sub.constant_cost += w;
      if (w < 0 && any_true) sub.constant_cost += -w;
      continue;
    }
    std::sort(buf.begin(), buf.end());
    sub.net.clauses.add(buf.data(), buf.size(), w);
  }
  return sub;
}

}  // namespace mln::solver
