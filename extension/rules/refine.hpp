// Refinement of a clause by one literal (refine.cpp), shared by the
// coverage search (search.cpp) and the MLN clause search (wpll.cpp).
#pragma once

#include <string>
#include <vector>

#include "rules/rules.hpp"

namespace mln::rules {

class Refiner {
 public:
  Refiner(const Task& t, const SearchOptions& o);
  // Every clause `base` plus one literal, in a fixed order.
  void refine(const Clause& base, std::vector<Clause>& out) const;
  // One string for clauses equal up to the order of their body literals
  // and the names of their variables past the head's `arity`.
  static std::string key(const Clause& c, size_t arity);

 private:
  void fill(const Clause& base, int pred, const std::vector<int>& types, size_t col, Literal& lit,
            std::vector<int>& var_types, bool linked, std::vector<Clause>& out) const;

  const Task& t_;
  const SearchOptions& o_;
  std::vector<std::vector<std::vector<int32_t>>> consts_;  // per predicate and column
};

}  // namespace mln::rules
