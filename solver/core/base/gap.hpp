// The relative gap between an answer's cost and a lower bound: the one
// formula of the solver's stop rules, the job tables' `gap` (SQL's mln._gap
// says the same) and the command line's report.  tests/data/gap_cases.tsv
// pins the C++ and SQL sides to the same values.
//
//   gap = (cost - bound) / max(|cost|, 1), and 0 once the bound reaches the cost.
//
// The 1 keeps a cost near zero from turning a small absolute difference into
// a large relative one (cost 0.01, bound 0: 1%, not 100%).
#pragma once

#include <algorithm>
#include <cmath>

namespace mln::solver {

inline double gap_scale(double cost) { return std::max(std::fabs(cost), 1.0); }

inline double relative_gap(double cost, double bound) { return cost <= bound ? 0.0 : (cost - bound) / gap_scale(cost); }

// The bound at which an answer of `cost` is within `tolerance` of it: a
// bound computed beside a walk stops there.
inline double gap_target(double cost, double tolerance) { return cost - tolerance * gap_scale(cost); }

}  // namespace mln::solver
