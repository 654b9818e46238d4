// Rule learning's options (options.hpp).
#include "rules/options.hpp"

#include <cstdint>

namespace mln::rules {

LearnOptions read_options(const OptionEntries& opts) {
  opts.reject_unknown();
  LearnOptions o;
  using options::Id;
  const auto small = [&](Id id) { return static_cast<int>(opts.whole(id)); };  // at most 10^9
  o.device = opts.choice(Id::kDevice);
  o.link = opts.choice_of<options::RuleLink>(Id::kLink);
  o.search.wpll = opts.choice_of<options::RuleScore>(Id::kScore) == options::RuleScore::kWpll;
  o.verbose = opts.boolean(Id::kVerbose);
  o.search.recursion = opts.boolean(Id::kRecursion);
  o.search.max_rows = static_cast<uint64_t>(opts.whole(Id::kMaxRows));
  o.search.max_body = small(Id::kMaxBody);
  o.search.max_vars = small(Id::kMaxVars);
  o.search.beam = small(Id::kBeam);
  o.search.max_rules = small(Id::kMaxRules);
  o.search.max_constants = small(Id::kMaxConstants);
  o.search.min_pos = opts.whole(Id::kMinPos);
  o.search.noise = opts.whole(Id::kNoise);
  o.negatives_per_positive = opts.whole(Id::kNegativesPerPositive);
  o.seed = opts.whole(Id::kSeed);
  o.search.min_gain = opts.number(Id::kMinGain);
  o.search.penalty = opts.number(Id::kPenalty);
  o.search.l2 = opts.number(Id::kL2);
  return o;
}

}  // namespace mln::rules
