// The options object of a function that is not a job of the options table
// (mln.datalog*, mln.learn_rules*, mln.problog, and rule learning jobs),
// read key by key: one set of rules and messages ("option "K" of mln.f must
// be ..."), so that the backend's SQL functions and the worker refuse a bad
// option the same way.  The entries are what PostgreSQL's jsonb_each gives
// (key, jsonb_typeof, value #>> '{}'): the caller asks its server for them
// (SPI in the backend, libpq in the worker), so no JSON is parsed here.  An
// entry whose value is JSON null is left out: the option takes its default.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mln {

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
  // `fn` names the function in messages (e.g. "mln.datalog"); `known` lists
  // the option names, shown when a key is not one of them.  Entries of
  // type "null" are dropped.
  OptionEntries(std::vector<OptionEntry> entries, std::string fn, std::string known);

  const std::vector<OptionEntry>& entries() const { return entries_; }
  const std::string& function() const { return fn_; }

  // Typed values of an entry; each throws OptionEntryError naming the option.
  bool boolean(const OptionEntry& e) const;
  int64_t whole(const OptionEntry& e, int64_t lo, int64_t hi, const std::string& what = "") const;
  double number(const OptionEntry& e, double lo, const std::string& what = "") const;
  std::string choice(const OptionEntry& e, const std::vector<std::string>& allowed) const;
  // The error for a key no option has.
  OptionEntryError unknown(const OptionEntry& e) const;

 private:
  OptionEntryError bad(const OptionEntry& e, const std::string& want) const;
  std::vector<OptionEntry> entries_;
  std::string fn_, known_;
};

}  // namespace mln
