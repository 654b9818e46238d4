// The options of the functions that are not jobs of inference or weight
// learning (mln.datalog*, mln.problog and ProbLog jobs, mln.learn_rules*
// and rule learning jobs): their rows are the options table's kDatalog,
// kProblog and kRules rows (options/options.hpp), read here key by key.
// The readers of each function take every value, given or default, from
// this reader: a default lives in the table only, and the backend's SQL
// functions and the worker refuse a bad option with the same message
// ("option "K" of mln.f must be ...").
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

// The functions whose options OptionEntries reads, as the table's bits.
enum OptionFn : unsigned {
  kDatalogOptions = options::kDatalog,
  kProblogOptions = options::kProblog,
  kRulesOptions = options::kRules
};

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
  // throws OptionEntryError naming the option.  An id the table has no row
  // of for this function is a programming error (std::logic_error).
  bool boolean(options::Id id) const;
  int64_t whole(options::Id id) const;
  double number(options::Id id) const;
  // A choice's name ("" where the row's default is the caller's and none
  // was given), or its value as the row's enum.
  std::string choice(options::Id id) const;
  template <class E>
  E choice_of(options::Id id) const {
    return static_cast<E>(options::choice_index(spec(id), choice(id)));
  }
  bool given(options::Id id) const;

 private:
  const options::Spec& spec(options::Id id) const;
  const OptionEntry* entry(const options::Spec& s) const;
  OptionEntryError bad(const options::Spec& s) const;
  std::vector<OptionEntry> entries_;
  std::string fn_;
  OptionFn bits_;
};

}  // namespace mln
