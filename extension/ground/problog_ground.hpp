// Grounding a ProbLog / CP-logic program (docs/problog.md) in three steps:
//  1. the atoms that can possibly be true: a Datalog program on the operator
//     engine that over-approximates the CP-theory (every head of every rule
//     possible, negation of derived relations dropped), beside one relation
//     per rule holding its ground instances (every variable's value) and one
//     per query and evidence atom; the propositional part (rules without
//     variables: problog_internal.hpp, HostPart) on the host instead, its
//     atoms facts of the Datalog program where that reads them;
//  2. the ground rules: each instance's heads and derived body atoms, a
//     negated atom that cannot be true dropped from its body;
//  3. relevance: only the rules that reach a query or evidence atom
//     backwards, in firing order (stratum, then definitions before uses).
// Pure C++ (no PostgreSQL).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lang/datalog.hpp"
#include "lang/problog.hpp"
#include "core/problog/forward_sampler.hpp"
#include "mln/relation.hpp"

namespace mln::ground::problog {

namespace pl = lang::problog;
namespace dl = lang::datalog;

// The Datalog program of step 1, checked as dl::parse checks a text
// (safety, strata), its atoms and terms at their ProbLog source positions
// (so that Datalog's errors point into the ProbLog text).  Derived
// relations get a leading constant column 0 (ProbLog has nullary atoms,
// Datalog does not), which messages do not count (hidden_columns);
// `.input` directives are read where they were written.  Relations:
// rule_relation(i) (for the rules not grounded on the host),
// query_relation(k), evidence_relation(k).  Throws LangError.
dl::Program datalog_program(const pl::Program& p);
std::string rule_relation(size_t rule);
std::string query_relation(size_t query);
std::string evidence_relation(size_t evidence);

struct GroundQuery {
  std::string text;  // the ground atom, as ProbLog writes it
  int index = -1;    // into CpProgram::queries; -1: it cannot be true (probability 0)
};

struct GroundProgram {
  mln::problog::CpProgram cp;
  std::vector<GroundQuery> queries;  // program order; a non-ground query's atoms sorted
  uint64_t instances = 0;            // ground rules before relevance
  uint64_t possible_atoms = 0;       // atoms of derived relations that can be true
};

// Steps 2 and 3 from the evaluated Datalog program `dp` (types inferred,
// constants encoded through `syms`; rows[r]: relation r's rows, derived ones
// filled).  Throws LangError where evidence cannot hold (with its position).
GroundProgram build_ground(const pl::Program& p, const dl::Program& dp, const std::vector<gpu::HostTable>& rows,
                           dl::Symbols& syms);

// All three steps for a program that reads no table (tests, benchmarks):
// throws LangError when it has input relations.
GroundProgram ground_program(gpu::Engine& eng, const pl::Program& p);

}  // namespace mln::ground::problog
