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
  // The same for clauses whose bodies hold the same literals in any order.
  static std::string key(const Clause& c);

 private:
  void fill(const Clause& base, int pred, const std::vector<int>& types, size_t col, Literal& lit,
            std::vector<int>& var_types, bool linked, std::vector<Clause>& out) const;

  const Task& t_;
  const SearchOptions& o_;
  std::vector<std::vector<std::vector<int32_t>>> consts_;  // per predicate and column
};

}  // namespace mln::rules
