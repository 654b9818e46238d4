// The options table (options/options.hpp): its rows are consistent, its
// defaults are the solver's, and the validator refuses each kind of bad
// value with a message naming the option.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "core/learn/learn.hpp"
#include "core/map/solve_map.hpp"
#include "core/walk/walksat_cpu.hpp"
#include "core/marginal/solve_marginal.hpp"
#include "options/options.hpp"

namespace mln::options {
namespace {

// The message and hint of the OptionError that `f` throws ("" when none).
template <typename F>
std::pair<std::string, std::string> error_of(F&& f) {
  try {
    f();
  } catch (const OptionError& e) {
    return {e.what(), e.hint};
  }
  return {"", ""};
}

std::string decode_error(unsigned bits, const std::string& json) {
  return error_of([&] { decode(bits, json); }).first;
}

TEST(OptionsTable, RowsAreConsistent) {
  std::set<std::pair<std::string, unsigned>> seen;
  for (const Spec& s : kSpecs) {
    SCOPED_TRACE(s.name);
    EXPECT_NE(std::string(s.doc), "");
    // Only a function's row may leave its default to the caller (said in its doc).
    if (s.tasks & kAnyTask) EXPECT_NE(std::string(s.def), "");
    EXPECT_EQ(s.tasks & kAnyTask ? 0u : s.tasks & ~kAnyFunction, 0u) << "a row is a job's or a function's";
    EXPECT_NE(task_name(s.tasks), "?");
    for (unsigned bit : {kMap, kMarginal, kLearn, kDatalog, kProblog, kRules})
      if (s.tasks & bit) EXPECT_TRUE(seen.insert({s.name, bit}).second) << "two rows apply to one task";
    // A row shares its name with the rows of its id only.
    for (const Spec& t : kSpecs) EXPECT_EQ(std::string(s.name) == t.name, s.id == t.id) << t.name;
    if (s.type == Type::kChoice) {
      ASSERT_NE(s.choices, nullptr);
      if (*s.def) EXPECT_TRUE(is_choice(s, s.def)) << "the default is one of the choices";
      // The hint of a bad choice is the doc: it names every choice.
      for (size_t i = 0; s.choices[i]; ++i)
        EXPECT_NE(std::string(s.doc).find(s.choices[i]), std::string::npos) << s.choices[i];
    } else if (s.type != Type::kBoolean) {
      if (s.tasks & kAnyTask) ASSERT_NE(s.allowed, nullptr);
      EXPECT_LE(s.lo, s.hi);
      // The default is a value the row accepts.
      EXPECT_NO_THROW(check_range(s, std::stod(s.def)));
    }
  }
  for (size_t i = 0; i < kIdCount; ++i)
    EXPECT_NE(find(static_cast<Id>(i), kAnyTask | kAnyFunction), nullptr) << "id " << i;
  // A choice's enum and its name agree both ways.
  EXPECT_STREQ(name_of(Device::kGpu), "gpu");
  EXPECT_EQ(choice_named<CpuWalk>("weighted"), CpuWalk::kWeighted);
  EXPECT_EQ(default_of<MapSolver>(Id::kSolver, kMap), MapSolver::kAuto);
  EXPECT_THROW(choice_named<Device>("tpu"), std::invalid_argument);
}

// The table's defaults are the ones the solver applies when an option is
// not given.
// (The structs read their defaults from the rows at compile time; this
// checks that reading against strtod's and the names' round trip.)
TEST(OptionsTable, DefaultsAreTheSolvers) {
  const solver::SolveOptions map;
  const solver::MarginalOptions mar;
  const solver::LearnOptions learn;
  auto def = [](Id id, unsigned bits) { return std::stod(find(id, bits)->def); };
  auto text = [](Id id, unsigned bits) { return std::string(find(id, bits)->def); };
  EXPECT_EQ(def(Id::kMaxFlips, kMap), map.max_flips);
  EXPECT_EQ(def(Id::kMaxFlips, kMarginal), mar.max_flips);
  EXPECT_EQ(def(Id::kMaxTries, kMap), map.max_tries);
  EXPECT_EQ(def(Id::kTimeout, kMap), map.timeout_s);
  EXPECT_EQ(def(Id::kTimeout, kLearn), learn.timeout_s);
  EXPECT_EQ(def(Id::kSeed, kMap), map.seed);
  EXPECT_EQ(def(Id::kSeed, kLearn), learn.seed);
  EXPECT_EQ(def(Id::kThreads, kMap), map.threads);
  EXPECT_EQ(text(Id::kDevice, kMap), std::string(name_of(map.device)));
  EXPECT_EQ(text(Id::kDevice, kMarginal), std::string(name_of(mar.device)));
  EXPECT_EQ(text(Id::kDevice, kLearn), std::string(name_of(learn.device)));
  EXPECT_EQ(def(Id::kRandomStep, kMap), map.random_step);
  EXPECT_EQ(def(Id::kRandomStep, kMarginal), mar.random_step);
  EXPECT_EQ(text(Id::kSkipComponentsWithoutQuery, kMap), map.skip_components_without_query ? "true" : "false");
  EXPECT_EQ(def(Id::kExactMaxAtoms, kMap), map.exact_max_atoms);
  EXPECT_EQ(def(Id::kExactMaxAtoms, kMarginal), mar.exact_max_atoms);
  EXPECT_EQ(def(Id::kExactMaxAtoms, kLearn), learn.exact_max_atoms);
  EXPECT_EQ(find(Id::kExactMaxAtoms, kAnyTask)->hi, solver::kExactMaxAtoms) << "enumeration's limit";
  EXPECT_EQ(text(Id::kDontBreak, kMap), map.dont_break ? "true" : "false");
  EXPECT_EQ(text(Id::kSolver, kMap), std::string(name_of(map.solver)));
  EXPECT_EQ(def(Id::kIlpSeconds, kMap), map.ilp_seconds);
  EXPECT_EQ(text(Id::kCpuWalk, kMap), std::string(name_of(map.cpu_walk)));
  EXPECT_EQ(def(Id::kGapTolerance, kMap), map.gap_tolerance);
  EXPECT_EQ(def(Id::kSamples, kMarginal), mar.samples);
  EXPECT_EQ(def(Id::kBurnIn, kMarginal), mar.burn_in);
  EXPECT_EQ(def(Id::kMcsatParam, kMarginal), mar.mcsat_param);
  EXPECT_EQ(def(Id::kSaTemperature, kMarginal), mar.sa_temperature);
  EXPECT_EQ(text(Id::kMethod, kLearn), std::string(name_of(learn.method)));
  EXPECT_EQ(def(Id::kIterations, kLearn), learn.iterations);
  EXPECT_EQ(def(Id::kSamples, kLearn), learn.samples);
  EXPECT_EQ(def(Id::kPriorStddev, kLearn), learn.prior_stddev);
  EXPECT_EQ(text(Id::kInit, kLearn), std::string(name_of(learn.init)));
  EXPECT_EQ(def(Id::kLearningRate, kLearn), learn.learning_rate);
}

TEST(OptionsDecode, ReadsEveryType) {
  Values v = decode(kInfer, R"({"max_flips": 9223372036854775807, "timeout": "2.5", "seed": 7e0, "device": "cpu",
                               "dont_break": "true", "skip_components_without_query": false, "samples": 2.0,
                               "random_step": null, "solver": "ilp"})");
  EXPECT_EQ(v.integer(Id::kMaxFlips), INT64_MAX);
  EXPECT_EQ(v.number(Id::kTimeout), 2.5);
  EXPECT_EQ(v.integer(Id::kSeed), 7);
  EXPECT_EQ(v.text(Id::kDevice), "cpu");
  EXPECT_EQ(v.choice<Device>(Id::kDevice), Device::kCpu);
  EXPECT_TRUE(v.boolean(Id::kDontBreak));
  EXPECT_TRUE(v.has(Id::kSkipComponentsWithoutQuery));
  EXPECT_FALSE(v.boolean(Id::kSkipComponentsWithoutQuery));
  EXPECT_EQ(v.integer(Id::kSamples), 2);
  EXPECT_FALSE(v.has(Id::kRandomStep)) << "JSON null is the default";
  EXPECT_FALSE(v.has(Id::kMaxTries));
  EXPECT_EQ(v.text(Id::kSolver), "ilp");
  EXPECT_EQ(v.choice<MapSolver>(Id::kSolver), MapSolver::kIlp);
  Values l = decode(kLearn, R"({"method": "perceptron", "iterations": 5, "device": "gpu", "init": "program"})");
  EXPECT_EQ(l.text(Id::kMethod), "perceptron");
  EXPECT_EQ(l.integer(Id::kIterations), 5);
  EXPECT_EQ(l.text(Id::kDevice), "gpu");
  EXPECT_TRUE(decode(kMap, " { } ").has(Id::kSeed) == false);
}

// Each kind of bad value, with the messages mln.infer and
// mln.learn_weights have always given (tests/sql assert several).
TEST(OptionsDecode, RefusesEachKindOfBadValue) {
  EXPECT_EQ(decode_error(kMarginal, R"({"sampels": 10})"), "unknown inference option \"sampels\"");
  EXPECT_EQ(decode_error(kLearn, R"({"methd": "dn"})"), "unknown learning option \"methd\"");
  EXPECT_EQ(decode_error(kMarginal, R"({"max_tries": 3})"),
            "inference option \"max_tries\" applies to MAP inference, not to task \"marginal\"");
  EXPECT_EQ(decode_error(kMap, R"({"samples": 10})"),
            "inference option \"samples\" applies to marginal inference, not to task \"map\"");
  EXPECT_EQ(decode_error(kLearn, R"({"solver": "ilp"})"), "unknown learning option \"solver\"");
  EXPECT_EQ(decode_error(kMarginal, R"({"samples": "many"})"),
            "inference option \"samples\" must be a number, not \"many\"");
  EXPECT_EQ(decode_error(kMarginal, R"({"skip_components_without_query": 1})"),
            "inference option \"skip_components_without_query\" must be true or false, not 1");
  EXPECT_EQ(decode_error(kMarginal, R"({"samples": 0})"), "invalid value 0 for inference option \"samples\"");
  EXPECT_EQ(decode_error(kMarginal, R"({"samples": 2.5})"), "invalid value 2.5 for inference option \"samples\"");
  EXPECT_EQ(decode_error(kMarginal, R"({"samples": 3000000000})"),
            "invalid value 3000000000 for inference option \"samples\"");
  EXPECT_EQ(decode_error(kMap, R"({"seed": 9223372036854775808})"),
            "invalid value 9223372036854775808 for inference option \"seed\"");
  EXPECT_EQ(decode_error(kMarginal, R"({"mcsat_param": 0})"), "invalid value 0 for inference option \"mcsat_param\"");
  EXPECT_EQ(decode_error(kLearn, R"({"iterations": 0})"), "invalid value 0 for learning option \"iterations\"");
  EXPECT_EQ(decode_error(kMarginal, R"({"device": "tpu"})"), "invalid device \"tpu\"");
  EXPECT_EQ(decode_error(kMap, R"({"solver": 3})"), "invalid solver 3");
  EXPECT_EQ(decode_error(kLearn, R"({"device": "tpu"})"), "invalid learning device \"tpu\"");
  EXPECT_EQ(decode_error(kMap, "[1, 2]"), "options must be a JSON object");
  EXPECT_EQ(decode_error(kMap, "null"), "options must be a JSON object");
  EXPECT_EQ(decode_error(kMap, R"({"seed": )"), "options are not valid JSON");
  // The hints name what is allowed.
  auto hint = [](unsigned bits, const std::string& json) { return error_of([&] { decode(bits, json); }).second; };
  EXPECT_NE(hint(kMarginal, R"({"samples": 0})").find("positive integer"), std::string::npos);
  EXPECT_NE(hint(kMarginal, R"({"sampels": 0})").find("samples, burn_in, mcsat_param, sa_temperature"),
            std::string::npos);
  EXPECT_NE(hint(kMap, R"({"samples": 0})").find("'marginal' or 'dual'"), std::string::npos);
  EXPECT_NE(hint(kMap, R"({"solver": "simplex"})").find("auto, walksat or ilp"), std::string::npos);
  EXPECT_EQ(error_of([] { infer_task_bits("learn"); }).first, "unknown inference task \"learn\"");
}

// The solver's own checks of typed options read the same rows.
TEST(OptionsDecode, TypedChecks) {
  const Spec& tries = *find(Id::kMaxTries, kMap);
  EXPECT_NO_THROW(check_range(tries, 1));
  EXPECT_THROW(check_range(tries, 0), OptionError);
  EXPECT_THROW(check_range(tries, 1.5), OptionError);
  EXPECT_EQ(error_of([] { check_range(*find(Id::kMaxTries, kMap), 0); }).first,
            "max_tries must be an integer >= 1 (got 0)");
  solver::SolveOptions o;
  o.max_tries = 0;
  EXPECT_THROW(solver::solve_map(mln::Network(), o), std::invalid_argument);
}

}  // namespace
}  // namespace mln::options
