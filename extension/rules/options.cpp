// Rule learning's options (options.hpp).
#include "rules/options.hpp"

#include <cstdint>
#include <map>

namespace mln::rules {

const char* const kOptionList =
    "device, score ('coverage', 'wpll'), link ('type', 'name'), max_body, max_vars, beam, min_pos, noise, "
    "max_rules, recursion, max_constants, max_rows, min_gain, penalty, l2, negatives_per_positive, seed and verbose";

LearnOptions read_options(const OptionEntries& opts) {
  LearnOptions o;
  const std::map<std::string, int*> ints = {{"max_body", &o.search.max_body}, {"max_vars", &o.search.max_vars},
                                            {"beam", &o.search.beam}, {"max_rules", &o.search.max_rules},
                                            {"max_constants", &o.search.max_constants}};
  const std::map<std::string, int64_t*> counts = {{"min_pos", &o.search.min_pos}, {"noise", &o.search.noise},
                                                  {"negatives_per_positive", &o.negatives_per_positive},
                                                  {"seed", &o.seed}};
  const std::map<std::string, double*> reals = {
      {"min_gain", &o.search.min_gain}, {"penalty", &o.search.penalty}, {"l2", &o.search.l2}};
  for (const OptionEntry& e : opts.entries()) {
    // Zero means "none" for these three; every other count starts at 1.
    const int64_t min = e.key == "noise" || e.key == "max_constants" || e.key == "seed" ? 0 : 1;
    if (e.key == "device")
      o.device = opts.choice(e, {"auto", "cpu", "gpu"});
    else if (e.key == "link")
      o.link = opts.choice(e, {"type", "name"});
    else if (e.key == "score")
      o.search.wpll = opts.choice(e, {"coverage", "wpll"}) == "wpll";
    else if (e.key == "verbose")
      o.verbose = opts.boolean(e);
    else if (e.key == "recursion")
      o.search.recursion = opts.boolean(e);
    else if (e.key == "max_rows")
      o.search.max_rows = static_cast<uint64_t>(opts.whole(e, 1, INT64_MAX));
    else if (ints.count(e.key))
      *ints.at(e.key) = static_cast<int>(opts.whole(e, min, 1000000000));
    else if (counts.count(e.key))
      *counts.at(e.key) = opts.whole(e, min, INT64_MAX);
    else if (reals.count(e.key))
      *reals.at(e.key) = opts.number(e, 0);
    else
      throw opts.unknown(e);
  }
  return o;
}

}  // namespace mln::rules
