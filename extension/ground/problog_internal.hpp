// Internal to the ProbLog grounder: the variables of a rule's instance
// relation, shared by the Datalog program (problog_ground.cpp) and the reading
// of its rows (problog_build.cpp); the part of the program grounded on the
// host (problog_host.cpp).
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

// The propositional part of a program, grounded on the host instead of by
// the Datalog program: a rule is a host rule when it has no variable, no
// comparison and no atom of a table, and every relation of its heads and
// positive body is a host relation; a host relation is one that only host
// rules define (the largest such set).  Such a rule is its own one ground
// instance, which exists when its positive body atoms can all be true: a
// propositional Horn fixpoint, linear in the rules' size.  Each rule of the
// Datalog program is an operator plan of its own, so the propositional
// benchmarks (GROWINGHEAD: a Datalog rule per head, N^2 / 2 of them) spent
// seconds per thousand rules there (docs/problog.md, "Performance").
struct HostPart {
  std::vector<char> rule;     // per rule: a host rule
  std::vector<char> pred;     // per predicate: a host relation
  std::vector<char> visible;  // per predicate: a host relation the Datalog program reads (a rule's positive
                              // body, a query, evidence): its possible atoms are facts there
  std::vector<char> fires;    // per rule: a host rule whose body can hold (its instance exists)
  bool any = false;           // some host rule
};
HostPart host_part(const pl::Program& p);

}  // namespace mln::ground::problog::detail
