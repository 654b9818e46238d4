// Internal to the ProbLog grounder: the variables of a rule's instance
// relation, shared by the Datalog text (problog_ground.cpp) and the reading
// of its rows (problog_build.cpp).
#pragma once

#include <string>
#include <vector>

#include "lang/problog.hpp"

namespace mln::ground::problog::detail {

namespace pl = lang::problog;

// The instance relation's columns after the leading 0: the named variables
// of the positive atoms in order of first appearance, and a fresh variable
// for each `_` of a positive derived atom (a different event per value).
std::vector<std::string> rule_vars(const pl::Program& p, const pl::Rule& r);
std::string fresh_var(int k);

}  // namespace mln::ground::problog::detail
