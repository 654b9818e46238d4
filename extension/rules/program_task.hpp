// An MLN program's evidence as a rule learning task: the one builder that
// mln.learn_rules_from (the backend, over SPI) and a rule learning job (the
// worker, over libpq) share, so that both learn from the same examples;
// only the reading of rows differs (EvidenceSource).
//
// The target predicate's true atoms are the positives, its false ones
// (`!P(..)`) the negatives, or, when it has none, a sample of the closed
// world's (negatives_per_positive per positive); every other predicate's
// true atoms are the background.  Columns link by declared argument type.
// Predicates with a float argument are not relations of ids and are left
// out.  Constants in rules show as the symbol's name ("Anna") for symbol
// types, as the number for int types.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mln/relation.hpp"
#include "rules/rules.hpp"

namespace mln::rules {

// A predicate as mln.predicates declares it.
struct DeclaredPredicate {
  std::string name;
  std::vector<std::string> types, kinds, columns;  // arg_types, arg_kinds (symbol | int | float), arg_names
};

// The program's predicates, in declaration order: $1 the program; columns
// name, then arg_types, arg_kinds and arg_names each as a comma list (names
// hold no comma).
extern const char* const kPredicatesSql;
DeclaredPredicate declared_predicate(const std::string& name, const std::string& types, const std::string& kinds,
                                     const std::string& columns);
// The distinct argument tuples of a predicate's atoms of one truth value,
// from its evidence table (`table` and `columns` already quoted).
std::string atoms_sql(const std::string& table, const std::vector<std::string>& columns, bool truth);
// The symbols of a program (`table`: its _symbols, quoted): id, name.
std::string symbols_sql(const std::string& table);

// A symbol as a constant of a rule: double-quoted unless it holds a double
// quote (then single-quoted, which Datalog reads).
std::string symbol_constant(const std::string& s);

// Where the rows come from.
class EvidenceSource {
 public:
  virtual ~EvidenceSource() = default;
  // atoms_sql's rows for `p`: one column per argument, as ids.
  virtual gpu::HostTable atoms(const DeclaredPredicate& p, bool truth) = 0;
  // symbols_sql's rows: each symbol's id and name.
  virtual std::vector<std::pair<int32_t, std::string>> symbols() = 0;
};

// The program has no such target, or no example of it.
class ProgramError : public TaskError {
 public:
  enum class Kind { kNoPredicate, kNoExamples };
  ProgramError(Kind kind, const std::string& msg, std::string hint)
      : TaskError(msg), kind(kind), hint(std::move(hint)) {}
  Kind kind;
  std::string hint;
};

// The target among `preds` (a predicate of integer or symbol arguments);
// throws ProgramError kNoPredicate when there is none.
const DeclaredPredicate& find_target(const std::vector<DeclaredPredicate>& preds, const std::string& program,
                                     const std::string& target);

// The task: reads the target's atoms and the background through `src`;
// throws ProgramError (no target, no true atom of it).
Task program_task(const std::vector<DeclaredPredicate>& preds, const std::string& program, const std::string& target,
                  EvidenceSource& src, int64_t negatives_per_positive, uint64_t seed);

}  // namespace mln::rules
