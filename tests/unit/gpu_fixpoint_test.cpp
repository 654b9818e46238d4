// Semi-naive fixpoint: transitive closure against a BFS reference.
#include <gtest/gtest.h>

#include <queue>

#include "gpu_test_util.hpp"

namespace mln::gpu::testing {
namespace {

class FixpointTest : public BackendTest {};
MLN_BACKEND_SUITE(FixpointTest);

// Reference transitive closure by breadth-first search from every node.
Rows ref_closure(const Rows& edges, int nodes) {
  std::vector<std::vector<int32_t>> adj(nodes);
  for (const Row& e : edges) adj[e[0]].push_back(e[1]);
  Rows out;
  for (int s = 0; s < nodes; ++s) {
    std::vector<char> seen(nodes, 0);
    std::queue<int32_t> q;
    for (int32_t t : adj[s]) q.push(t);
    while (!q.empty()) {
      int32_t v = q.front();
      q.pop();
      if (seen[v]) continue;
      seen[v] = 1;
      out.push_back({s, v});
      for (int32_t t : adj[v]) q.push(t);
    }
  }
  return sorted(out);
}

// Closure rule: path(x, z) <- delta(x, y), edge(y, z).
DeriveFn closure_rule(const Relation& edges) {
  return [edges](Engine& e, const Relation&, const Relation& delta) {
    return e.join(delta, edges, {1}, {0}, {{0, 0}, {1, 1}});
  };
}

TEST_P(FixpointTest, TransitiveClosureOfRandomGraphs) {
  std::mt19937 rng(31);
  for (int nodes : {1, 5, 60, 300}) {
    for (int degree : {1, 3}) {
      HostTable g = random_table(rng, static_cast<size_t>(nodes) * degree, 2, nodes);
      Relation edges = eng().upload(g);
      FixpointStats st;
      Relation tc = fixpoint(eng(), edges, closure_rule(edges), &st);
      Rows want = ref_closure(to_rows(g), nodes);
      EXPECT_EQ(fetch(eng(), tc), want) << nodes << " nodes, degree " << degree;
      EXPECT_EQ(st.rows, want.size());
      EXPECT_GE(st.iterations, 1);
    }
  }
}

TEST_P(FixpointTest, ChainNeedsOneRoundPerPathLength) {
  const int k = 40;  // chain 0 -> 1 -> ... -> k
  HostTable g;
  g.cols.assign(2, {});
  for (int i = 0; i < k; ++i) g.cols[0].push_back(i), g.cols[1].push_back(i + 1);
  // Duplicate base edges must not survive (full stays duplicate-free).
  for (int i = 0; i < k; i += 3) g.cols[0].push_back(i), g.cols[1].push_back(i + 1);
  Relation edges = eng().upload(g);
  FixpointStats st;
  Relation tc = fixpoint(eng(), edges, closure_rule(edges), &st);
  EXPECT_EQ(tc.rows(), static_cast<size_t>(k * (k + 1) / 2));
  EXPECT_EQ(st.iterations, k);  // round i finds paths of length i+1; round k finds none
  EXPECT_EQ(fetch(eng(), tc), ref_closure(to_rows(g), k + 1));
}

TEST_P(FixpointTest, MaxIterationsStopsEarly) {
  HostTable g;
  g.cols = {{0, 1, 2, 3}, {1, 2, 3, 4}};
  Relation edges = eng().upload(g);
  FixpointStats st;
  Relation tc = fixpoint(eng(), edges, closure_rule(edges), &st, 1);
  EXPECT_EQ(st.iterations, 1);
  EXPECT_EQ(tc.rows(), 4u + 3u);  // edges plus paths of length 2
}

TEST_P(FixpointTest, EmptyBaseNeedsNoRound) {
  Relation none = eng().empty(2);
  FixpointStats st;
  Relation tc = fixpoint(eng(), none, closure_rule(none), &st);
  EXPECT_EQ(tc.rows(), 0u);
  EXPECT_EQ(st.iterations, 0);
}

}  // namespace
}  // namespace mln::gpu::testing
