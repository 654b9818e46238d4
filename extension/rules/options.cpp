// Rule learning's options (options.hpp).
#include "rules/options.hpp"

#include <cstdint>

namespace mln::rules {

LearnOptions read_options(const OptionEntries& opts) {
  opts.reject_unknown();
  LearnOptions o;
  const auto small = [&](const char* name) { return static_cast<int>(opts.whole(name)); };  // at most 10^9
  o.device = opts.choice("device");
  o.link = opts.choice("link");
  o.search.wpll = opts.choice("score") == "wpll";
  o.verbose = opts.boolean("verbose");
  o.search.recursion = opts.boolean("recursion");
  o.search.max_rows = static_cast<uint64_t>(opts.whole("max_rows"));
  o.search.max_body = small("max_body");
  o.search.max_vars = small("max_vars");
  o.search.beam = small("beam");
  o.search.max_rules = small("max_rules");
  o.search.max_constants = small("max_constants");
  o.search.min_pos = opts.whole("min_pos");
  o.search.noise = opts.whole("noise");
  o.negatives_per_positive = opts.whole("negatives_per_positive");
  o.seed = opts.whole("seed");
  o.search.min_gain = opts.number("min_gain");
  o.search.penalty = opts.number("penalty");
  o.search.l2 = opts.number("l2");
  return o;
}

}  // namespace mln::rules
