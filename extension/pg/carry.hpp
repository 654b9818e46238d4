// The last MAP answer, carried by mln.ground to the network it stores
// (issue #62), so that the next MAP job starts from it and, where the
// atoms the change touched are known, searches only their components
// (solver/worker's read_live_change, solver/core/map/map_touched.hpp).
//
// Before a grounding drops the network tables, the answer on them is read
// (_map's true atoms, _map_info's cost and bound: the worker writes both).
// After it, the answer goes to the new network's ids: after a live update
// by the state's own map, with the atoms the update touched; otherwise by
// comparing the stored network with the new one (ground/network_diff.hpp),
// which matches atoms by predicate and arguments and finds the touched
// atoms too; above kMaxDiffClauses stored clauses, by predicate and
// arguments alone (touched atoms not known: the job searches everything,
// from the answer).  It is written to <schema>._carried (atom, truth,
// touched) with the network and described in ground_stats' "carried".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/network.hpp"
#include "ground/grounder.hpp"
#include "ground/network_diff.hpp"
#include "pg/live_ground.hpp"
#include "pg/spi.hpp"

namespace mln::pg {

// The stored network's answers: the MAP answer (have_map: _map_info has
// the job's row, written since the network was stored) and the marginals
// (have_marginals: _marginal has rows).
struct StoredAnswer {
  bool have_map = false;
  int64_t map_job = 0, marginal_job = 0;  // the jobs that wrote them
  std::vector<int32_t> true_atoms;
  std::vector<ground::AtomKey> true_keys;  // (pred, args) of each
  double cost = 0;
  bool have_bound = false;
  double bound = 0;
  bool optimal = false;
  bool have_marginals = false;
  std::vector<int32_t> marginal_atoms;
  std::vector<double> marginal_probs;
  bool have() const { return have_map || have_marginals; }
};
// keys: with each true atom's predicate and arguments (for carrying by
// arguments, where the network is not compared).
StoredAnswer read_stored_answer(Spi& spi, const std::string& schema, bool keys);

// The stored network itself (atoms by id, clauses), for the comparison
// (up to kMaxDiffClauses clauses: stored_clauses, -1 when none; `have` is
// false where its tables cannot be read).
constexpr int64_t kMaxDiffClauses = 5000000;
int64_t stored_clauses(Spi& spi, const std::string& program);
struct StoredNetwork {
  bool have = false;
  std::vector<ground::AtomKey> atoms;
  mln::ClauseSet clauses;
};
StoredNetwork read_stored_network(Spi& spi, const std::string& schema);

struct CarriedAnswer {
  bool have = false;
  bool have_map = false;
  std::vector<int32_t> true_atoms;  // ids of the new network
  bool have_marginals = false;      // not carried by arguments alone
  std::vector<int32_t> marginal_atoms;
  std::vector<double> marginal_probs;
  bool touched_known = false;
  std::vector<int32_t> touched;
  std::string how;  // "live update", "compared", "by arguments"
};
CarriedAnswer carry_answer(const StoredAnswer& answer, const LiveRun& run, const StoredNetwork& before,
                           const ground::GroundOutput& out);

// Writes <schema>._carried (call after the network is stored); carried_json
// is ground_stats' "carried" member ("null" without an answer).
void store_carried(Spi& spi, const std::string& schema, const CarriedAnswer& carried);
std::string carried_json(const CarriedAnswer& carried, const StoredAnswer& answer);

}  // namespace mln::pg
