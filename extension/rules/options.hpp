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
  int64_t negatives_per_positive = 3;  // closed-world negatives when none are given
  int64_t seed = 1;                    // their sample's seed
  std::string link = "type";           // columns link by SQL type, or by column name (mln.learn_rules)
  bool verbose = false;                // progress as NOTICE (backend) or log lines (worker)
  SearchOptions search;
};

// Reads every entry of `opts` (OptionEntries names the function in its
// messages; built with kRulesOptions); throws OptionEntryError on an
// unknown option or a bad value.  Defaults are the table's (options/option_entries.hpp).
LearnOptions read_options(const OptionEntries& opts);

}  // namespace mln::rules
