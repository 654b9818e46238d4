// KBMC (reference §5.3) as a symbolic search over atom patterns, shared by
// both grounding paths: the operator engine (kbmc.cpp) and the plain-SQL
// path (extension/pg/sql_ground.cpp) each materialise the patterns it finds
// their own way.  Pure C++: no engine, no database.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lang/program.hpp"

namespace mln::ground::kbmc {

// Pattern term codes: variable k (1-based, numbered by first occurrence) is
// k; a constant with id v is kConst + v.
constexpr int64_t kConst = int64_t(1) << 40;
using Pattern = std::vector<int64_t>;

inline bool is_var(int64_t x) { return x < kConst / 2; }
// Number of distinct variables of a (canonical) pattern.
int dimension(const Pattern& t);
// Pattern text as Tuffy prints it: Cancer(v1), Likes(v1, C1).
std::string pattern_text(const lang::Program& prog, int pred, const Pattern& t);

// Per predicate: Tuffy's "safe-ref-only" (every variable of its positive
// literals is bound by a negative literal) and whether a scoping rule owns it.
struct PredicateUse {
  std::vector<uint8_t> safe_ref_only;
  std::vector<uint8_t> scoped;
};
PredicateUse predicate_use(const lang::Program& prog);

struct SearchResult {
  std::vector<uint8_t> relevant;               // per clause
  std::vector<std::vector<Pattern>> patterns;  // per predicate: the relevant patterns
  std::vector<std::string> seeds;              // query patterns, as Tuffy prints them
};

// The backward-chaining search.  queries[p] holds predicate p's query
// argument lists (negative: a variable, numbered by first occurrence;
// otherwise a constant id); no_need_to_ground[p] marks predicates KBMC never
// expands; constant_id gives the id of a constant written in a rule.
SearchResult search(const lang::Program& prog, const std::vector<std::vector<std::vector<int32_t>>>& queries,
                    const std::vector<uint8_t>& no_need_to_ground,
                    const std::function<int64_t(const lang::Term&, lang::TypeKind)>& constant_id);

}  // namespace mln::ground::kbmc
