// Least fixpoints of a theory of the target (docs/rules.md, "Recursion"),
// on the operator engine, for the coverage of recursive candidates: a
// target literal in a body holds for what the theory derives from the
// background, as in mln.datalog, never for an example merely because it is
// one.  The Datalog evaluator of extension/ground is out of this layer's
// reach (rules/ includes mln/ only, and the worker links it), so this is
// the semi-naive loop of docs/datalog.md for the one shape rule learning
// makes: definite clauses of one target over base relations, no
// arithmetic, no negation.
#pragma once

#include <cstdint>
#include <vector>

#include "rules/rules.hpp"

namespace mln::rules {

// The literal's relation `base` with constants selected, repeated variables
// equated, and one column per distinct variable (vars: those variables, in
// order of first occurrence).
gpu::Relation literal_rows(gpu::Engine& eng, const gpu::Relation& base, const Literal& lit, std::vector<int>& vars);

// The body holds a literal of the target.
bool is_recursive(const Clause& c);
// Every head variable (0..arity-1) occurs in a body literal: a rule
// mln.datalog runs (it refuses a head variable no body atom binds).
bool binds_head(const Clause& c, size_t arity);
// The body holds the head literal itself, so the rule is true of anything
// and derives nothing.
bool is_tautology(const Clause& c, size_t arity);

// The fixpoint passed max_rows rows (the theory's facts, or one step's
// intermediate result).
struct FixpointTooLarge {};

class Fixpoint {
 public:
  Fixpoint(gpu::Engine& eng, const std::vector<gpu::Relation>& background, size_t arity, uint64_t max_rows);
  // The least fixpoint of `rules` (each binding its head) over the
  // background, from `start`: facts that fixpoint holds, closed under the
  // first `closed` rules (their own fixpoint, or an empty relation with
  // closed 0), which the first round then skips.  Throws FixpointTooLarge.
  gpu::Relation derive(const std::vector<const Clause*>& rules, const gpu::Relation& start, size_t closed = 0);
  gpu::Relation empty();

 private:
  struct Bound {
    gpu::Relation rel;
    std::vector<int> vars;  // the variable of each column
    int col(int v) const;
  };
  // The head tuples `c` derives in one step: target literals read `full`,
  // the one at body position delta_at (when >= 0) reads `delta`.
  gpu::Relation step(const Clause& c, const gpu::Relation& full, const gpu::Relation& delta, int delta_at);
  Bound join(const Bound& l, const gpu::Relation& rows, const std::vector<int>& vars);
  gpu::Relation cross(const Bound& l, const gpu::Relation& r);
  void check(size_t rows) const;

  gpu::Engine& eng_;
  const std::vector<gpu::Relation>& bg_;
  size_t arity_;
  uint64_t max_rows_;
};

}  // namespace mln::rules
