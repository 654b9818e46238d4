// Tuffy-style grounding (KBMC, active-atom closure, active clauses,
// consolidation) as plans of gpu/ relational operators.
//
// Pure C++ (no PostgreSQL).  The extension reads evidence tables into
// GroundInput, calls ground(), and stores GroundOutput in the program's
// schema.  The same function serves the 'cpu' and 'gpu' paths (the Engine
// decides where operators run).  Semantics: docs/tuffy-reference.md §5.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lang/program.hpp"
#include "format/network.hpp"
#include "mln/relation.hpp"

namespace mln::ground {

// The symbol dictionary: id -> string, ids start at 1 (index 0 unused).
// Either every name is in `names` (make_input, tests), or, inside
// PostgreSQL, `lookup` and `load_names` reach the program's _symbols table
// on demand: grounding needs the ids of a few constants, and the text of
// symbols only for conditions and weights computed on the host, so the
// table (10^5 to 10^7 constants) is not read for every mln.ground().
class Symbols {
 public:
  std::vector<std::string> names{std::string()};
  std::function<int32_t(const std::string&)> lookup;  // id of a name, 0 when absent
  std::function<std::vector<std::string>()> load_names;  // every name, index = id

  // Id of a symbol; 0 when absent.
  int32_t id_of(const std::string& s) const;
  // Text of symbol `id`; nullptr when there is none.
  const std::string* name_of(int32_t id) const;

 private:
  mutable std::unordered_map<std::string, int32_t> ids_;  // names (eager) or lookups (lazy)
  mutable size_t indexed_ = 1;                            // names[1, indexed_) are in ids_
  mutable std::vector<std::string> loaded_;               // load_names(), once
  mutable bool have_loaded_ = false;
};

// Evidence of one predicate, columnar.  args[k][i] is the symbol id (or the
// raw integer for Int-typed arguments) of argument k of row i.
struct PredEvidence {
  std::vector<std::vector<int32_t>> args;
  std::vector<uint8_t> truth;  // 1 true, 0 false (after '!')
  std::vector<double> prior;   // NaN for hard evidence; else P(true)
  size_t rows() const { return truth.size(); }
};

// A query with constants resolved to symbol ids (variables: -1, -2, ... by
// first occurrence; a bare predicate name is all variables).
struct QueryPattern {
  int pred = -1;
  std::vector<int32_t> args;
};

// Takes consolidated clauses [first, last) of a clause set's arrays
// (GroundOptions::on_clauses).
using ClauseSink =
    std::function<void(const int64_t* offsets, const int32_t* lits, const double* weights, size_t first, size_t last)>;

struct GroundOptions {
  bool activate_all = false;          // Tuffy's -activateAll
  // Weight learning (Tuffy's -learnwt, reference section 7.4): evidence of
  // the query predicates is the training world, not evidence (their atoms
  // stay unknown and every unknown atom is active), and each ground clause
  // keeps the learnable first-order clauses it came from (out.origins).
  bool learning = false;
  std::vector<int> extra_closed_world;  // -cw predicates (indices)
  // Hard-clause unit propagation after consolidation (unit_propagate below;
  // GUC mln.unit_propagation).  Never run when learning.
  bool unit_propagate = true;
  // Progress callback: phase name and a fraction in [0,1]; called from the
  // calling thread only, at most a few times a second.  May throw to cancel.
  std::function<void(const std::string& phase, double fraction)> progress;
  // Where set (and not learning): the consolidated clauses handed over while
  // the rest merge (the store overlaps consolidation, issue #45), on the
  // calling thread, in order, a range at a time: clauses [first, last) of
  // the network's arrays, of which only that range (offsets to last) and
  // its literals may be read during the call.  Unit propagation runs after
  // the last range and may rewrite what was handed over
  // (UnitPropStats::rewrote()).  May throw to cancel.
  ClauseSink on_clauses;
};

struct GroundInput {
  const lang::Program* program = nullptr;
  Symbols symbols;
  // domain[type name] is computed by the grounder from symbols seen in
  // evidence, rule constants and queries, per argument type (Tuffy §2.3);
  // the caller only supplies the symbol ids seen per type:
  std::vector<std::pair<std::string, std::vector<int32_t>>> type_domains;
  std::vector<PredEvidence> evidence;  // indexed by predicate
  std::vector<QueryPattern> queries;
};

// One active atom.
struct Atom {
  int32_t pred;
  std::vector<int32_t> args;
  int8_t evidence;   // -1 unknown, 0 false, 1 true (soft evidence: 1 with prior)
  double prior;      // NaN if none
  bool is_query;     // club 1 or 3
};

// What unit_propagate() did (stats key "unit_propagation").
struct UnitPropStats {
  bool ran = false;             // propagation was run (option on, not learning)
  bool hard_conflict = false;   // the hard clauses contradict each other: network left as grounded
  int64_t atoms_fixed = 0;      // atoms forced by the hard clauses
  int64_t clauses_before = 0;   // clauses before propagation
  int64_t clauses_removed = 0;  // input clauses gone: satisfied, costing nothing, or folded into the constant
  int64_t clauses_shortened = 0;  // input clauses kept with fewer literals (the fixed atoms' literals dropped)
  double constant_cost = 0;     // cost every state pays now, kept as one clause without literals
  bool rewrote() const { return atoms_fixed > 0; }  // the network changed (else it is as consolidated)
};

struct PhaseTime {
  std::string phase;
  double seconds;
};

struct GroundOutput {
  std::vector<Atom> atoms;  // atom id = index + 1
  Network network;          // num_atoms == atoms.size(); clauses consolidated
  // True query evidence (printed by MAP output although not in the MRF).
  std::vector<std::pair<int32_t, std::vector<int32_t>>> true_query_evidence;
  std::vector<int> relevant_clauses;  // clause indices KBMC kept
  std::vector<std::string> kbmc_patterns;  // "Cancer(v1)" lines Tuffy prints
  int closure_rounds = 0;
  std::vector<PhaseTime> phases;
  // Learning only.  Per ground clause (CSR), the learnable first-order
  // clauses it came from as +-(clause index + 1): minus where the ground
  // clause is the first-order clause's negation (a negative unit clause
  // stored flipped, weight negated).  A learnable clause is soft, not fixed
  // ('@') and has no embedded weight.
  std::vector<int64_t> origin_off;
  std::vector<int32_t> origins;
  std::vector<uint8_t> training_truth;  // by atom id (size atoms + 1): the query predicates' evidence
  UnitPropStats unit_propagation;
};

// Whether the learner may change first-order clause c's weight.
inline bool learnable_clause(const lang::Clause& c) { return !c.hard && !c.fixed && c.weight_var.empty(); }

// Grounds `in` on `eng`.  Throws lang::LangError for semantic problems,
// gpu::EngineError for engine failures (including cancellation).
GroundOutput ground(const GroundInput& in, gpu::Engine& eng, const GroundOptions& opts = {});

// Hard-clause unit propagation (docs/grounding.md, "Unit propagation"):
// fixes the atoms the hard clauses force (a hard positive unit clause, a
// hard w>0 clause with all but one literal false, every literal of a hard
// w<0 clause), to a fixpoint; then drops the clauses the fixed atoms
// satisfy, removes their false literals from the others, folds what became
// constant into one clause without literals, and gives every fixed atom one
// hard unit clause stating its value ([+a], +kHardWeight or -kHardWeight).
// Atom ids do not change.  The cost of every state that agrees with the
// fixed atoms is unchanged, so when the hard clauses can all hold the
// optimum is unchanged.  When propagation finds that they cannot (an atom
// forced both ways, a hard clause all false), the network is left exactly
// as it was and hard_conflict is set.  Linear in the network's size; a
// network where nothing is forced is not copied.  Per-clause side arrays
// (GroundOutput::origins) are not kept in step: the grounder does not call
// it when learning.
UnitPropStats unit_propagate(Network& net);

// Whether clauses [first, last) (a clause set's arrays) hold a start of
// unit_propagate()'s forcing: a hard w < 0 clause, or a hard w > 0 clause
// of at most one literal.  A network without one comes out of propagation
// unchanged.
bool may_start_forcing(const int64_t* offsets, const double* weights, size_t first, size_t last);

// Id of a constant written in a rule or query: its raw value for Int-typed
// arguments, else its symbol id in `symbols`.  Throws lang::LangError
// (TypeClash for a non-integer in an Int argument, BadValue when missing).
int32_t rule_constant_id(const lang::Term& t, lang::TypeKind kind,
                         const Symbols& symbols);

// Builds a GroundInput from text-level data, interning constants the way
// Tuffy does (ids from 1 in first-seen order: program, queries, evidence)
// and collecting each type's domain.  Used by tests, benchmarks and the
// extension's loader.  `prog` must outlive the result.
GroundInput make_input(const lang::Program& prog, const std::vector<lang::Query>& queries,
                       const std::vector<lang::EvidenceAtom>& evidence);

}  // namespace mln::ground
