// The options of the functions that are not jobs of the options table
// (mln.datalog*, mln.problog and problog jobs, mln.learn_rules* and rule
// learning jobs): one table of them (kEntrySpecs: name, the functions it
// applies to, type, range or choices, default, one line of documentation),
// which mln.options() lists beside the job options (options/options.hpp), and one
// reader over it.  The readers of each function take every value, given or
// default, from the reader by name: a default lives in the table only, and
// the backend's SQL functions and the worker refuse a bad option with the
// same message ("option "K" of mln.f must be ...").
//
// The entries are what PostgreSQL's jsonb_each gives (key, jsonb_typeof,
// value #>> '{}'): the caller asks its server for them (SPI in the backend,
// libpq in the worker), so no JSON is parsed here.  An entry whose value is
// JSON null is left out: the option takes its default.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "options/options.hpp"

namespace mln {

// The functions whose options the table holds, as bits.
enum OptionFn : unsigned { kDatalogOptions = 1, kProblogOptions = 2, kRulesOptions = 4 };

struct EntrySpec {
  const char* name;
  unsigned fns;          // OptionFn bits
  options::Type type;
  const char* choices;   // kChoice: "a|b|c"
  double lo, hi;         // kInteger, kNumber: the range, inclusive unless open
  bool lo_open, hi_open;
  const char* def;       // the value when not given ("": the caller's default, said in doc)
  const char* allowed;   // what a value must be, completing "must be ..."; nullptr: from the range
  const char* doc;
};

constexpr double kEntryInt64Max = 9223372036854775807.0;

inline constexpr EntrySpec kEntrySpecs[] = {
    {"device", kDatalogOptions | kProblogOptions | kRulesOptions, options::Type::kChoice, "auto|cpu|gpu", 0, 0, false,
     false, "", nullptr, "where the work runs: auto, cpu or gpu; not given: the mln.device setting"},
    {"max_rows", kDatalogOptions | kProblogOptions, options::Type::kInteger, nullptr, 0, kEntryInt64Max, false, false,
     "100000000", "a whole number >= 0 (0: no limit)",
     "most rows one Datalog rule may derive (ProbLog: its grounding's Datalog program); past it, an error"},
    {"samples", kProblogOptions, options::Type::kInteger, nullptr, 0, 1e12, false, false, "0",
     "a whole number >= 0 (0: the stopping rule)",
     "a fixed count of accepted samples; 0: until every query's 95% interval is narrower than delta"},
    {"delta", kProblogOptions, options::Type::kNumber, nullptr, 0, 1, true, true, "0.01",
     "a number in (0, 1): the width of the 95% interval the stopping rule reaches",
     "the stopping rule: every query's 95% (Wilson) interval narrower than this"},
    {"max_samples", kProblogOptions, options::Type::kInteger, nullptr, 1, 1e12, false, false, "10000000", nullptr,
     "most samples drawn, accepted or not (a warning when the stopping rule is not reached by then)"},
    {"seed", kProblogOptions, options::Type::kInteger, nullptr, 0, kEntryInt64Max, false, false, "42", nullptr,
     "random seed: the answer is a function of the program, the options and the device"},
    {"threads", kProblogOptions, options::Type::kInteger, nullptr, 0, 4096, false, false, "0",
     "a whole number in [0, 4096] (0: all cores)", "CPU threads of the sampler; 0: all cores (a worker: its --threads)"},
    {"score", kRulesOptions, options::Type::kChoice, "coverage|wpll", 0, 0, false, false, "coverage", nullptr,
     "coverage (Aleph: definite clauses scored P - N) or wpll (weighted MLN clauses by pseudo-likelihood)"},
    {"link", kRulesOptions, options::Type::kChoice, "type|name", 0, 0, false, false, "type", nullptr,
     "mln.learn_rules: columns join by SQL type, or by column name"},
    {"max_body", kRulesOptions, options::Type::kInteger, nullptr, 1, 1e9, false, false, "4", nullptr,
     "literals in a rule's body"},
    {"max_vars", kRulesOptions, options::Type::kInteger, nullptr, 1, 1e9, false, false, "6", nullptr,
     "variables in a rule, the head's included"},
    {"beam", kRulesOptions, options::Type::kInteger, nullptr, 1, 1e9, false, false, "8", nullptr,
     "candidates kept per refinement depth"},
    {"min_pos", kRulesOptions, options::Type::kInteger, nullptr, 1, kEntryInt64Max, false, false, "2", nullptr,
     "a rule covers at least this many of the positives left"},
    {"noise", kRulesOptions, options::Type::kInteger, nullptr, 0, kEntryInt64Max, false, false, "0", nullptr,
     "and at most this many negatives"},
    {"max_rules", kRulesOptions, options::Type::kInteger, nullptr, 1, 1e9, false, false, "10", nullptr,
     "rules in the theory"},
    {"recursion", kRulesOptions, options::Type::kBoolean, nullptr, 0, 0, false, false, "false", nullptr,
     "the target may appear in a body (coverage is then the theory's least fixpoint)"},
    {"max_constants", kRulesOptions, options::Type::kInteger, nullptr, 0, 1e9, false, false, "8", nullptr,
     "a column with at most this many distinct values offers them as constants (0: none)"},
    {"max_rows", kRulesOptions, options::Type::kInteger, nullptr, 1, kEntryInt64Max, false, false, "50000000", nullptr,
     "most binding rows one candidate may hold; a candidate past it is not refined"},
    {"min_gain", kRulesOptions, options::Type::kNumber, nullptr, 0, 0, false, false, "2", nullptr,
     "wpll: nats a clause must add to the log-likelihood"},
    {"penalty", kRulesOptions, options::Type::kNumber, nullptr, 0, 0, false, false, "1", nullptr,
     "wpll: nats charged per body literal"},
    {"l2", kRulesOptions, options::Type::kNumber, nullptr, 0, 0, false, false, "0.01", nullptr,
     "wpll: the Gaussian prior's precision on the clause weights"},
    {"negatives_per_positive", kRulesOptions, options::Type::kInteger, nullptr, 1, kEntryInt64Max, false, false, "3",
     nullptr, "closed-world negatives drawn per positive when no negatives are given"},
    {"seed", kRulesOptions, options::Type::kInteger, nullptr, 0, kEntryInt64Max, false, false, "1", nullptr,
     "seed of the closed-world negatives' sample"},
    {"verbose", kDatalogOptions | kProblogOptions | kRulesOptions, options::Type::kBoolean, nullptr, 0, 0, false,
     false, "false", nullptr, "progress as NOTICEs (a worker: log lines)"},
};

// "datalog", "problog, rules", ...: the functions of `fns`, for mln.options().
std::string entry_fn_names(unsigned fns);
// What a value of `s` must be ("a whole number >= 1", "'auto', 'cpu' or 'gpu'").
std::string entry_allowed(const EntrySpec& s);
// The option names of function `fn`, for the hint of an unknown one.
std::string entry_option_list(unsigned fn);

struct OptionEntry {
  std::string key, type, value;  // jsonb_each's key, jsonb_typeof(value), value #>> '{}'
};

// A bad option: the message names the option and the function; the hint,
// where there is one, lists the options.
class OptionEntryError : public std::invalid_argument {
 public:
  OptionEntryError(const std::string& msg, std::string hint) : std::invalid_argument(msg), hint(std::move(hint)) {}
  std::string hint;
};

class OptionEntries {
 public:
  // `fn` names the function in messages (e.g. "mln.datalog"); `fn_bits` is
  // its row set in the table.  Entries of type "null" are dropped.
  OptionEntries(std::vector<OptionEntry> entries, std::string fn, OptionFn fn_bits);

  const std::string& function() const { return fn_; }
  // Throws OptionEntryError for the first entry the table has no row for.
  void reject_unknown() const;
  // An option's value, given or default, checked against its row; each
  // throws OptionEntryError naming the option.  A name the table has no row
  // of for this function is a programming error (std::logic_error).
  bool boolean(const char* name) const;
  int64_t whole(const char* name) const;
  double number(const char* name) const;
  std::string choice(const char* name) const;
  bool given(const char* name) const;

 private:
  const EntrySpec& spec(const char* name) const;
  const OptionEntry* entry(const char* name) const;
  OptionEntryError bad(const EntrySpec& s) const;
  std::vector<OptionEntry> entries_;
  std::string fn_;
  OptionFn bits_;
};

}  // namespace mln
