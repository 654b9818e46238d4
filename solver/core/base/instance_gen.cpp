// Planted random weighted MaxSAT generator.
#include "core/base/instance_gen.hpp"

#include <algorithm>

#include "core/base/rng.hpp"

namespace mln::solver {

GeneratedInstance generate_planted_maxsat(int32_t num_atoms, int64_t num_clauses, uint64_t seed) {
  GeneratedInstance g;
  Rng rng(derive_seed(seed, 0x504C414Eull));
  g.net.num_atoms = num_atoms;
  g.planted.assign(num_atoms + 1, 0);
  for (int32_t a = 1; a <= num_atoms; ++a) g.planted[a] = static_cast<uint8_t>(rng.next() >> 63);
  g.net.is_query.assign(num_atoms + 1, 1);
  g.net.is_query[0] = 0;
  auto& cs = g.net.clauses;
  cs.lits.reserve(num_clauses * 3);
  cs.offsets.reserve(num_clauses + 1);
  cs.weights.reserve(num_clauses);
  int32_t lits[3];
  for (int64_t c = 0; c < num_clauses; ++c) {
    int k = std::min<int32_t>(num_atoms, (rng.below(3) == 0) ? 2 : 3);
    for (int i = 0; i < k; ++i) {
      int32_t a;
      bool dup;
      do {  // distinct atoms within a clause
        a = static_cast<int32_t>(rng.below(static_cast<uint32_t>(num_atoms))) + 1;
        dup = false;
        for (int j = 0; j < i; ++j) dup |= (lits[j] == a || lits[j] == -a);
      } while (dup);
      lits[i] = (rng.next() >> 63) ? a : -a;
    }
    bool sat = false;
    for (int i = 0; i < k; ++i) sat |= (lits[i] > 0) == (g.planted[std::abs(lits[i])] != 0);
    if (!sat) lits[rng.below(k)] *= -1;  // make the planted assignment satisfy it
    std::sort(lits, lits + k);
    cs.add(lits, k, 0.5 + 1.5 * rng.uniform());
  }
  return g;
}

}  // namespace mln::solver
