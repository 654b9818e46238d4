// Strongly connected components of a dependency graph (Tarjan), for the
// stratification of Datalog and ProbLog programs.  Iterative: a program's
// dependency chain can be as long as it has relations (p0 :- p1. p1 :- p2.
// ...), and a recursive walk would overflow the stack on such input.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

namespace mln::lang {

struct Components {
  std::vector<std::vector<int>> members;  // in completion order: dependencies first
  std::vector<int> of;                    // each vertex's component (-1: not visited)
};

// The components reachable from the vertices `root(v)` accepts, over `succ`
// (succ(v) returns the vertices v depends on, as a vector of int).
template <class Succ, class Root>
Components strongly_connected(int n, const Succ& succ, const Root& root) {
  Components out;
  out.of.assign(n, -1);
  std::vector<int> index(n, -1), low(n, 0), stack;
  std::vector<char> on(n, 0);
  std::vector<std::pair<int, size_t>> frames;  // (vertex, next successor to look at)
  int counter = 0;
  for (int r = 0; r < n; ++r) {
    if (index[r] >= 0 || !root(r)) continue;
    frames.push_back({r, 0});
    index[r] = low[r] = counter++;
    stack.push_back(r);
    on[r] = 1;
    while (!frames.empty()) {
      auto& [v, k] = frames.back();
      const auto& next = succ(v);
      if (k < next.size()) {
        const int w = next[k++];
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          on[w] = 1;
          frames.push_back({w, 0});
        } else if (on[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      const int done = v;
      frames.pop_back();
      if (!frames.empty()) low[frames.back().first] = std::min(low[frames.back().first], low[done]);
      if (low[done] != index[done]) continue;
      std::vector<int> c;
      int w;
      do {
        w = stack.back();
        stack.pop_back();
        on[w] = 0;
        out.of[w] = static_cast<int>(out.members.size());
        c.push_back(w);
      } while (w != done);
      out.members.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace mln::lang
