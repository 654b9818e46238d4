// Datalog evaluation on the operator engine (docs/datalog.md): strata in
// order, each a semi-naive fixpoint whose rules are joins, selections,
// projections and anti-joins of gpu::Engine; arithmetic and comparisons the
// engine's select cannot express run on the host over the downloaded rows.
// Pure C++: no PostgreSQL.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lang/datalog.hpp"
#include "mln/relation.hpp"

namespace mln::ground::datalog {

namespace dl = lang::datalog;

struct EvalOptions {
  // Most rows the derived relations may hold together, and any intermediate
  // result of a rule; 0: no limit.  Above it evaluation stops with
  // LimitExceeded (a recursion with arithmetic may never end).
  uint64_t max_rows = 0;
  // Most rows of a join's output materialised at once; a join past it is
  // evaluated in pieces (docs/datalog.md, "Large joins"), as is one whose
  // output would not fit the engine's memory budget.  0: the engine's limit
  // on a relation (kMaxRelationRows), or MLN_DATALOG_SPLIT_ROWS where that
  // environment variable is set (a testing hook: it forces pieces through
  // SQL, see split_rows_for).  Changes no result.
  uint64_t split_rows = 0;
  // Called after each stratum's first round (iteration 0) and each
  // semi-naive iteration with the new rows of that iteration.  May throw to
  // cancel (the SQL glue checks for interrupts here).
  std::function<void(int stratum, int iteration, uint64_t delta_rows)> progress;
};

// The most rows a relation of the engine holds (row ids are int32).
constexpr uint64_t kMaxRelationRows = 0x7fffffff;

// The split threshold evaluate() uses for `o` (see EvalOptions::split_rows):
// at least 1, at most kMaxRelationRows.
uint64_t split_rows_for(const EvalOptions& o);

struct EvalStats {
  int iterations = 0;  // semi-naive iterations over all strata
};

// The program stopped at max_rows.
class LimitExceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Division by zero or a result beyond 32-bit integers (as SQL's int4).
class ArithmeticError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Evaluates `p` (types inferred, constants encoded).  inputs[r] holds the
// rows of every input relation r (arity columns; symbol ids for text);
// entries of derived relations are ignored.  Returns every relation's rows,
// derived ones duplicate-free.  Throws gpu::EngineError (cancel included),
// LimitExceeded, ArithmeticError, or what progress throws.
std::vector<gpu::Relation> evaluate(gpu::Engine& eng, const dl::Program& p, std::vector<gpu::Relation> inputs,
                                    const EvalOptions& opts, EvalStats* stats = nullptr);

// mln.datalog_explain (docs/datalog.md, "Explain"): one entry per rule, in
// stratum order, with the plan the evaluator would run, from estimated row
// counts instead of rows.  Nothing is evaluated.
struct RuleExplain {
  int stratum = 0;
  int rule = 0;            // index into Program::rules
  bool recursive = false;  // reads a relation of its own stratum: delta variants
  double est_rows = 0;     // the rule's estimated output (rough: see explain_program)
  std::string plan;        // lines, like EXPLAIN's
};

// est_rows[r]: the estimated rows of each input relation r (derived ones
// ignored), est_how[r] how they were estimated (shown with them).  A derived relation is estimated as the sum of its non-recursive
// rules' estimates, a rule's output as its largest positive atom (a fact: 1),
// a delta as its whole relation's estimate.  `p` needs no inferred types.
std::vector<RuleExplain> explain_program(const dl::Program& p, const std::vector<double>& est_rows,
                                         const std::vector<std::string>& est_how = {});

namespace detail {

// The join order rule, shared by the evaluator and explain_program: the
// index of the next atom to join among `vars` (each atom's variables) and
// `rows` (each atom's rows): the smallest (the first on a tie), among those
// sharing a variable with `bound` (indexed by variable) when any does;
// bound == nullptr: the first atom, the smallest of all.
size_t next_atom(const std::vector<std::vector<int>>& vars, const std::vector<double>& rows,
                 const std::vector<char>* bound);

// Positions of a rule's positive atoms that read a relation of its own
// stratum (in_s[rel]): semi-naive runs one delta variant per position.
std::vector<int> recursive_atoms(const dl::Rule& r, const std::vector<char>& in_s);

// Stratum `s` to its fixpoint, evaluate()'s step (also maintain()'s for a
// stratum it evaluates again): `full` holds every lower relation's rows,
// and the stratum's relations are replaced by theirs.  base_rows: the rows
// of earlier strata's derived relations, which max_rows counts too.
// Returns the stratum's rows.
uint64_t evaluate_stratum(gpu::Engine& eng, const dl::Program& p, int s, std::vector<gpu::Relation>& full,
                          const EvalOptions& opts, uint64_t base_rows, EvalStats* stats = nullptr);

// One rule's new rows (head arity columns, duplicates possible): positive
// atom `delta_atom` (-1: none) reads delta[rel], every other atom full[rel].
gpu::Relation eval_rule(gpu::Engine& eng, const dl::Program& p, const dl::Rule& r,
                        const std::vector<gpu::Relation>& full, const std::vector<gpu::Relation>& delta,
                        int delta_atom, uint64_t max_rows, uint64_t split_rows = kMaxRelationRows);

// The machine's memory in bytes (physical, or its cgroup's limit where lower;
// 0 where unknown): what mln.cpu_memory_limit's default is a share of.
uint64_t host_memory_bytes();

// The union of a rule's pieces (eval_rule, where a join passes split_rows),
// without duplicates: parts are kept aside and merged into the result
// (difference, then union_all) once they hold as many rows as it, so each
// row is deduplicated O(log pieces) times while nothing larger than the
// result and one batch is held.  A result past kMaxRelationRows throws
// LimitExceeded naming the rule's line.
class PieceUnion {
 public:
  PieceUnion(gpu::Engine& eng, int line) : eng_(eng), line_(line) {}
  void add(const gpu::Relation& part);
  // The union (a null Relation when no part had rows).
  gpu::Relation result();

 private:
  gpu::Engine& eng_;
  int line_;
  gpu::Relation acc_;
  std::vector<gpu::Relation> pending_;
  uint64_t pending_rows_ = 0;
  void flush();
};

// The value of an expression over a row: var_value(v) gives variable v's
// value.  Throws ArithmeticError.  (Shared with the tests' reference.)
int32_t eval_expr(const dl::Expr& e, const std::function<int32_t(int)>& var_value);
bool eval_cmp(dl::Cmp op, int32_t a, int32_t b);

}  // namespace detail

}  // namespace mln::ground::datalog
