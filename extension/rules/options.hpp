// The options of rule learning: one reader for mln.learn_rules,
// mln.learn_rules_from (in the backend) and a rule learning job (the
// worker; queued by mln.learn_rules_job, checked then by the same reader),
// so that they accept and refuse the same options with the same messages.
#pragma once

#include <cstdint>
#include <string>

#include "options/option_entries.hpp"
#include "rules/rules.hpp"

namespace mln::rules {

struct LearnOptions {
  std::string device;                  // auto | cpu | gpu; empty: the caller's default (mln.device, auto)
  // Closed-world negatives drawn per positive when none are given, and their sample's seed.
  int64_t negatives_per_positive = options::default_integer(options::Id::kNegativesPerPositive, options::kRules);
  int64_t seed = options::default_integer(options::Id::kSeed, options::kRules);
  options::RuleLink link = options::RuleLink::kType;  // columns link by SQL type, or by column name (mln.learn_rules)
  bool verbose = false;                // progress as NOTICE (backend) or log lines (worker)
  SearchOptions search;
};

// Reads every entry of `opts` (OptionEntries names the function in its
// messages; built with kRulesOptions); throws OptionEntryError on an
// unknown option or a bad value.  Defaults are the table's (options/options.hpp).
LearnOptions read_options(const OptionEntries& opts);

}  // namespace mln::rules
