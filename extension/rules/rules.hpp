// Learning rules from relations (docs/rules.md): an Aleph/Progol-style
// top-down search whose every candidate's coverage is computed bottom-up on
// the operator engine (gpu::Engine, CPU or CUDA), over all examples at once,
// as seed 004 does.  Pure C++: no PostgreSQL (the SQL glue is
// extension/pg/learn_rules_fn.cpp).
//
// A task: a target predicate with positive and negative example tuples,
// background relations (facts), and a type per column; variables link only
// columns of one type.  A learned rule is a definite clause
//   target(V0, .., Vk-1) :- l1, .., ln.
// whose body literals are background atoms (or the target itself, read as
// what the theory derives, when recursion is allowed) over variables and,
// for columns with few distinct values, constants.  Every head variable
// occurs in the body, so mln.datalog runs the rules as they are.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "mln/relation.hpp"
#include "options/options.hpp"

namespace mln::rules {

// A relation of the task: its name, a type id per column and its rows.
struct Predicate {
  std::string name;
  std::vector<int> types;  // per column, indices into Task::type_names
  gpu::HostTable rows;     // arity columns
};

struct Task {
  std::vector<std::string> type_names;  // for messages
  std::vector<Predicate> background;
  Predicate target;                     // rows unused: the examples are pos and neg
  gpu::HostTable pos, neg;              // example tuples, target arity columns
  // Renders a value of a type as text (constants in rules); default: the number.
  std::function<std::string(int type, int32_t value)> show;
  // The table the negatives were read from, for messages; "" when they are
  // the evidence's false atoms or sampled from the closed world.
  std::string negatives_source;
};

// Something the caller tells the user (the SQL glue: a WARNING with its hint).
struct Warning {
  std::string message, hint;
};

// Defaults: the options table's rules rows (options/options.hpp), which
// mln.options() shows and the SQL functions' reader applies.
struct SearchOptions {
  static constexpr int64_t def(options::Id id) { return options::default_integer(id, options::kRules); }
  int max_body = static_cast<int>(def(options::Id::kMaxBody));  // literals in a body
  int max_vars = static_cast<int>(def(options::Id::kMaxVars));  // variables in a rule, the head's included
  int beam = static_cast<int>(def(options::Id::kBeam));         // candidates kept per refinement depth
  int64_t min_pos = def(options::Id::kMinPos);  // a rule covers at least this many (remaining) positives
  int64_t noise = def(options::Id::kNoise);     // and at most this many negatives
  int max_rules = static_cast<int>(def(options::Id::kMaxRules));  // rules in the theory
  // The target may appear in a body (read as the theory's fixpoint).
  bool recursion = options::default_boolean(options::Id::kRecursion, options::kRules);
  // A column with at most this many distinct values offers constants (0: none).
  int max_constants = static_cast<int>(def(options::Id::kMaxConstants));
  // Most binding rows one candidate may hold; beyond it it is not refined.
  uint64_t max_rows = static_cast<uint64_t>(def(options::Id::kMaxRows));
  // Scoring: coverage (Aleph: definite clauses, P - N) or wpll (MLN clauses
  // body => target with weights, scored by the examples' conditional
  // log-likelihood; learn_mln_rules).
  bool wpll = options::default_choice<options::RuleScore>(options::Id::kScore, options::kRules) ==
              options::RuleScore::kWpll;
  // wpll: a clause must raise the log-likelihood by this many nats; nats
  // charged per body literal (of equal fits, the shorter clause wins); the
  // Gaussian prior's precision on the clause weights.
  double min_gain = options::default_number(options::Id::kMinGain, options::kRules);
  double penalty = options::default_number(options::Id::kPenalty, options::kRules);
  double l2 = options::default_number(options::Id::kL2, options::kRules);
  // Called after each refinement depth; may throw to cancel.
  std::function<void(int rule, int depth, int64_t candidates)> progress;
};

// An argument of a body literal: a variable (var >= 0) or a constant.
struct Arg {
  int var = -1;
  int32_t value = 0;
};

struct Literal {
  int pred = -1;  // index into Task::background, or kTarget (the target, read as what the theory derives)
  std::vector<Arg> args;
};
constexpr int kTarget = -2;

struct Clause {
  std::vector<Literal> body;
  std::vector<int> var_types;  // per variable; the head's are 0..arity-1
};

struct Coverage {
  int64_t pos = 0, neg = 0;
};

struct LearnedRule {
  Clause clause;
  Coverage on_all;        // over every example
  int64_t new_pos = 0;    // positives it covered that no earlier rule did
  double score = 0;       // coverage: pos - neg when it was chosen (over the remaining positives);
                          // wpll: the log-likelihood gain when it was added
  double weight = 0;      // wpll: the clause's weight in the final fit
  std::string text;       // in Datalog/MLN syntax
};

struct SearchStats {
  int64_t candidates = 0;  // coverage evaluations
  double coverage_s = 0;   // seconds in coverage
};

// The task's data is inconsistent (arity, types) or an option is out of range.
class TaskError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The search options' own rules, before any data is read (the worker's
// jobs are checked by them when queued): ranges, max_vars against the
// target's arity, and with wpll no recursion.  Throws TaskError.
void check_search_options(const SearchOptions& o, size_t arity);

// What a search of `task` should warn of: no negative example, so that
// every rule covering min_pos positives is accepted (an empty negatives
// table reads as none given).
std::vector<Warning> task_warnings(const Task& task);

// Closed-world negatives: `n` distinct tuples of the target's arity, not
// positives, each column drawn uniformly from the values it can take: the
// positives' values in it and those of every background column of its
// type that shares one with them; fewer when the domain runs out.
// Deterministic in `seed`.
gpu::HostTable sample_negatives(const Task& task, size_t n, uint64_t seed);

// Covering loop: the best rule by beam search over the remaining positives,
// its positives removed, until no rule meets min_pos and noise, or max_rules.
// Throws TaskError, gpu::EngineError (cancel included) or what progress throws.
std::vector<LearnedRule> learn_rules(gpu::Engine& eng, const Task& task, const SearchOptions& opts,
                                     SearchStats* stats = nullptr);

// MLN clause search (wpll.cpp): clauses `body => target` added one at a time,
// each the candidate (by the same refinement and beam as learn_rules) whose
// weight most raises the conditional log-likelihood of the examples, until
// none raises it by min_gain or max_rules; the weights of the clauses and of
// the target's unit clause are then fitted together.  The examples are the
// target's ground atoms (positives true, negatives false); a clause's feature
// on an example is its number of true body groundings, which is what an
// MLN's pseudo-log-likelihood of a target atom counts when each clause holds
// one target literal.  The first rule returned is the unit clause.
std::vector<LearnedRule> learn_mln_rules(gpu::Engine& eng, const Task& task, const SearchOptions& opts,
                                         SearchStats* stats = nullptr);

// A clause as text: `target(A, B) :- parent(A, C), parent(C, B).`
std::string render(const Task& task, const Clause& c);
// As an MLN formula with its weight: `1.25 parent(a, c) ^ parent(c, b) => grandparent(a, b)`.
std::string render_mln(const Task& task, const Clause& c, double weight);
// The formula alone: `parent(a, c) ^ parent(c, b) => grandparent(a, b)`.
std::string render_formula(const Task& task, const Clause& c);

// Coverage of clauses on the engine, the examples and background uploaded
// once; each candidate extends its parent's bindings by one literal, so
// candidates that share a prefix share that prefix's joins.  A target
// literal reads the least fixpoint of the theory learned so far plus the
// candidate (set_theory; fixpoint.hpp), so a recursive candidate is scored
// by what it derives, as mln.datalog would run it.
class CoverageEngine {
 public:
  // Bindings of a clause: one row per (example, satisfying assignment of the
  // body's variables): column 0 the example's index (positives first, then
  // negatives), columns 1.. the variables.
  struct Node {
    Clause clause;
    gpu::Relation bindings;
    Coverage cov;
    bool refinable = true;  // false: its bindings (or its fixpoint) passed max_rows
    // A recursive clause with a head variable its body does not bind has no
    // finite fixpoint to read: cov is its parent's, which bounds what every
    // refinement of it covers, and bindings are its parent's.  Never a rule.
    bool bound_only = false;
  };

  CoverageEngine(gpu::Engine& eng, const Task& task, uint64_t max_rows);
  // The rules learned so far, whose fixpoint target literals read (with the
  // candidate's own derivations); every one binds its head.  False, and the
  // theory unchanged, when that fixpoint passes max_rows rows.
  bool set_theory(const std::vector<Clause>& theory);
  // Which positives the theory's fixpoint holds (by index).
  std::vector<char> derived_pos();
  // The empty body over the examples whose `active` flag is set (a positive
  // already covered is left out of a covering loop's later searches).
  Node root(const std::vector<char>& active_pos);
  // `parent` with `lit` added (its new variables already in clause.var_types).
  // A recursive child is evaluated from the last root() up, as its parent's
  // bindings read another fixpoint.
  Node extend(const Node& parent, const Clause& child);
  // A whole clause from scratch (tests, and a theory's final coverage), its
  // target literals reading the theory's fixpoint (set_theory).
  Coverage cover(const Clause& c, const std::vector<char>& active_pos);
  // Which positives a clause covers (by index), from a node's bindings.
  std::vector<char> covered_pos(const Node& n);
  // Each example's number of bindings (by index: positives, then negatives).
  std::vector<double> counts(const Node& n);
  int64_t num_pos() const { return npos_; }

 private:
  Coverage count(const gpu::Relation& bindings);
  // `parent` joined with child's last literal, a target literal reading `target`.
  Node join_last(const Node& parent, const Clause& child, const gpu::Relation& target);
  // `c` from `from` (a root) up, target literals reading `target`.
  Node from_root(const Node& from, const Clause& c, const gpu::Relation& target);
  Node extend_recursive(const Node& parent, const Clause& child);

  gpu::Engine& eng_;
  const Task& task_;
  uint64_t max_rows_;
  int64_t npos_ = 0;
  std::vector<gpu::Relation> bg_;  // background relations, uploaded
  gpu::Relation examples_;         // index, then the target's columns
  std::vector<Clause> theory_;     // set_theory's rules
  gpu::Relation theory_facts_;     // their least fixpoint over the background
  Node root_;                      // the last root()
};

}  // namespace mln::rules
