// The options of inference and learning jobs: one table of every option
// (name, the tasks it applies to, type, range or allowed values, default,
// one line of documentation) and the validator over it.  Every reader of a
// job's options goes through this table: the SQL checks mln.infer and
// mln.learn_weights run (extension/pg/options_fn.cpp, also mln.options()),
// the worker's decoding of a job (solver/worker), the command line's flags
// (solver/cli/options.cpp) and solve_map's own checks, so that they cannot
// disagree on what a job may ask for.
//
// No dependencies beyond the standard library: the extension, the solver
// and the tests include it alike.  Errors are OptionError (a message naming
// the option and a hint naming what is allowed), an std::invalid_argument.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace mln::options {

// What an option applies to, as bits: the jobs' tasks (a dual job is
// kMap | kMarginal), then the SQL functions that are not jobs of these
// tasks (mln.datalog*; mln.problog and ProbLog jobs; mln.learn_rules* and
// rule learning jobs), whose options OptionEntries reads
// (options/option_entries.hpp).
enum Task : unsigned {
  kMap = 1, kMarginal = 2, kLearn = 4, kInfer = kMap | kMarginal, kAnyTask = 7,
  kDatalog = 8, kProblog = 16, kRules = 32, kAnyFunction = kDatalog | kProblog | kRules
};

enum class Type : uint8_t { kInteger, kNumber, kBoolean, kChoice };

// The choices of each kChoice option, as the enum its readers decode to:
// ChoiceNames<E>::names lists E's values' names in E's order (the table's
// rows point at these lists, so that a name and its enum value cannot drift).
enum class Device : uint8_t { kAuto, kCpu, kGpu };
enum class MapSolver : uint8_t { kAuto, kWalksat, kIlp };
enum class CpuWalk : uint8_t { kAuto, kWalksat, kWeighted };
enum class LearnMethod : uint8_t { kDn, kPerceptron };
enum class LearnInit : uint8_t { kTuffy, kProgram };
enum class RuleScore : uint8_t { kCoverage, kWpll };
enum class RuleLink : uint8_t { kType, kName };

inline constexpr const char* kDeviceChoices[] = {"auto", "cpu", "gpu", nullptr};
inline constexpr const char* kMapSolverChoices[] = {"auto", "walksat", "ilp", nullptr};
inline constexpr const char* kCpuWalkChoices[] = {"auto", "walksat", "weighted", nullptr};
inline constexpr const char* kLearnMethodChoices[] = {"dn", "perceptron", nullptr};
inline constexpr const char* kLearnInitChoices[] = {"tuffy", "program", nullptr};
inline constexpr const char* kRuleScoreChoices[] = {"coverage", "wpll", nullptr};
inline constexpr const char* kRuleLinkChoices[] = {"type", "name", nullptr};

template <class E> struct ChoiceNames;
template <> struct ChoiceNames<Device> { static constexpr const char* const* names = kDeviceChoices; };
template <> struct ChoiceNames<MapSolver> { static constexpr const char* const* names = kMapSolverChoices; };
template <> struct ChoiceNames<CpuWalk> { static constexpr const char* const* names = kCpuWalkChoices; };
template <> struct ChoiceNames<LearnMethod> { static constexpr const char* const* names = kLearnMethodChoices; };
template <> struct ChoiceNames<LearnInit> { static constexpr const char* const* names = kLearnInitChoices; };
template <> struct ChoiceNames<RuleScore> { static constexpr const char* const* names = kRuleScoreChoices; };
template <> struct ChoiceNames<RuleLink> { static constexpr const char* const* names = kRuleLinkChoices; };

// The name of a choice ("gpu" for Device::kGpu).
template <class E>
constexpr const char* name_of(E e) {
  return ChoiceNames<E>::names[static_cast<size_t>(e)];
}

// The value of E named `name` (for callers that hold a name, as tests and
// benchmarks do); std::invalid_argument when E has no such choice.
template <class E>
E choice_named(std::string_view name) {
  for (size_t i = 0; ChoiceNames<E>::names[i]; ++i)
    if (name == ChoiceNames<E>::names[i]) return static_cast<E>(i);
  throw std::invalid_argument("no choice named \"" + std::string(name) + "\"");
}

// Every option name; an option whose rules differ between tasks (samples,
// device, seed, ...) has one row per side, all with its id.
enum class Id : uint8_t {
  kMaxFlips, kTimeout, kSeed, kThreads, kDevice, kRandomStep, kSkipComponentsWithoutQuery, kExactMaxAtoms,
  kPartitions, kMaxTries, kDontBreak, kSolver, kIlpSeconds, kCpuWalk, kRounds, kGapTolerance, kSamples, kBurnIn,
  kMcsatParam, kSaTemperature, kMethod, kIterations, kPriorStddev, kInit, kLearningRate,
  kMaxRows, kDelta, kMaxSamples, kScore, kLink, kMaxBody, kMaxVars, kBeam, kMinPos, kNoise, kMaxRules,
  kRecursion, kMaxConstants, kMinGain, kPenalty, kL2, kNegativesPerPositive, kVerbose, kMaintain,
  kCount
};
constexpr size_t kIdCount = static_cast<size_t>(Id::kCount);

struct Spec {
  Id id;
  const char* name;
  unsigned tasks;               // Task bits: the jobs or functions it applies to
  Type type;
  const char* const* choices;   // kChoice: ChoiceNames' list of the enum it decodes to
  double lo, hi;                // kInteger, kNumber: the range (hi: kNoMax when unbounded)
  bool lo_open, hi_open;        // lo, hi themselves are not allowed
  const char* def;              // the default as mln.options() shows it ("": the caller's, said in doc)
  const char* allowed;          // what a value must be, completing "<name> must be ..."; nullptr: from the range
  const char* doc;              // what the option does, one line
};

constexpr double kNoMax = std::numeric_limits<double>::infinity();
constexpr double kInt32Max = 2147483647.0;
constexpr double kInt64Max = 9223372036854775807.0;

// In the order the hints list them: every inference task's, MAP's, the
// marginal's, learning's; then the functions' (Datalog, ProbLog, rules).
inline constexpr Spec kSpecs[] = {
    {Id::kMaxFlips, "max_flips", kInfer, Type::kInteger, nullptr, 0, kInt64Max, false, false, "0",
     "an integer >= 0 (0: 100 x atoms)",
     "flips per try over the network (MAP) or per SampleSAT call (marginal); 0: 100 x atoms (-maxFlips)"},
    {Id::kTimeout, "timeout", kAnyTask, Type::kNumber, nullptr, 0, kNoMax, false, false, "0", "seconds >= 0 (0: none)",
     "wall-clock limit of the job in seconds; the answer so far is kept (-timeout)"},
    {Id::kSeed, "seed", kAnyTask, Type::kInteger, nullptr, 0, kInt64Max, false, false, "1", "an integer >= 0",
     "random seed: an answer is a function of the network, the options and the seed (--seed)"},
    {Id::kThreads, "threads", kAnyTask, Type::kInteger, nullptr, 0, 4096, false, false, "0",
     "an integer from 0 (all cores) to 4096", "CPU threads; 0: the worker's --threads, else all cores (-threads)"},
    {Id::kDevice, "device", kInfer, Type::kChoice, kDeviceChoices, 0, 0, false, false, "auto", nullptr,
     "where the search, the sampling and the LP bound run: auto (the GPU for large components when there is one), cpu, or gpu "
     "(fails without a usable GPU) (--search-device)"},
    {Id::kRandomStep, "random_step", kInfer, Type::kNumber, nullptr, 0, 1, false, false, "0.5", "a probability within [0, 1]",
     "probability of a random walk step; when not given, MAP lowers it from 0.5 over the tries (-randomStep)"},
    {Id::kSkipComponentsWithoutQuery, "skip_components_without_query", kInfer, Type::kBoolean, nullptr, 0, 0, false, false,
     "true", nullptr, "leave components without a query atom unsolved, as Tuffy does (false: -nopush)"},
    {Id::kExactMaxAtoms, "exact_max_atoms", kAnyTask, Type::kInteger, nullptr, 0, 20, false, false, "12",
     "an integer from 0 (off) to 20",
     "components of at most this many atoms are solved, sampled or counted exactly, by enumeration (--exact-max-atoms)"},
    {Id::kPartitions, "partitions", kInfer, Type::kInteger, nullptr, 0, 4096, false, false, "0",
     "an integer from 0 (auto: whole components over the connected workers, for networks of 10^6 clauses or more) "
     "to 4096 (1: one worker)",
     "parts one job is spread over, each solved by whichever worker claims it"},
    {Id::kMaxTries, "max_tries", kMap, Type::kInteger, nullptr, 1, kInt32Max, false, false, "3", "an integer >= 1",
     "WalkSAT tries, each from the best state so far (-maxTries)"},
    {Id::kDontBreak, "dont_break", kMap, Type::kBoolean, nullptr, 0, 0, false, false, "false", nullptr,
     "never flip an atom whose flip violates a hard clause (-dontBreak)"},
    {Id::kSolver, "solver", kMap, Type::kChoice, kMapSolverChoices, 0, 0, false, false, "auto", nullptr,
     "auto (MaxWalkSAT, then the exact ILP path within ilp_seconds), walksat (MaxWalkSAT only) or ilp (the exact "
     "path only) (--solver)"},
    {Id::kIlpSeconds, "ilp_seconds", kMap, Type::kNumber, nullptr, 0, kNoMax, false, false, "10",
     "seconds >= 0 (0: off)",
     "solver auto: the exact path's time for the whole job in seconds (--ilp-seconds)"},
    {Id::kCpuWalk, "cpu_walk", kMap, Type::kChoice, kCpuWalkChoices, 0, 0, false, false, "auto", nullptr,
     "the walk on CPU threads: auto (weighted for components of 1,000 atoms or more, walksat below), walksat "
     "(Tuffy's MaxWalkSAT) or weighted (the GPU's weighted walk) (--cpu-walk)"},
    {Id::kRounds, "rounds", kMap, Type::kInteger, nullptr, 1, 1000, false, false, "30",
     "an integer from 1 to 1000 (rounds over the parts that share clauses)",
     "a job spread over parts: rounds over the parts that share clauses (default 30 where the parts' walks are kept "
     "between rounds, else 3)"},
    {Id::kGapTolerance, "gap_tolerance", kMap, Type::kNumber, nullptr, 0, 1, false, false, "0.005",
     "a fraction within [0, 1]",
     "solver auto: an answer whose gap to its lower bound is within this fraction is returned (--gap-tolerance)"},
    {Id::kSamples, "samples", kMarginal, Type::kInteger, nullptr, 1, kInt32Max, false, false, "100",
     "a positive integer (samples per component)", "MC-SAT samples counted per component (-mcsatSamples)"},
    {Id::kBurnIn, "burn_in", kMarginal, Type::kInteger, nullptr, 0, kInt32Max, false, false, "0",
     "an integer >= 0 (MC-SAT steps before counting)", "MC-SAT steps before samples are counted"},
    {Id::kMcsatParam, "mcsat_param", kMarginal, Type::kNumber, nullptr, 0, kNoMax, true, false, "1",
     "a number > 0 (a satisfied clause is kept with probability 1 - exp(-|w| x))",
     "a satisfied clause is kept with probability 1 - exp(-|w| x) (-mcsatParam)"},
    {Id::kSaTemperature, "sa_temperature", kMarginal, Type::kNumber, nullptr, 0, kNoMax, true, false, "10",
     "a number > 0 (SampleSAT's simulated-annealing coefficient)",
     "SampleSAT's simulated-annealing coefficient (-sa)"},
    {Id::kMethod, "method", kLearn, Type::kChoice, kLearnMethodChoices, 0, 0, false, false, "dn", nullptr,
     "dn (diagonal Newton on MC-SAT counts) or perceptron (voted perceptron on MAP counts)"},
    {Id::kIterations, "iterations", kLearn, Type::kInteger, nullptr, 1, 100000, false, false, "100",
     "an integer from 1 to 100000", "learning iterations (-dMaxIter)"},
    {Id::kSamples, "samples", kLearn, Type::kInteger, nullptr, 1, kInt32Max, false, false, "100",
     "a positive integer (MC-SAT samples per iteration)", "MC-SAT samples per iteration and component (-mcsatSamples)"},
    {Id::kPriorStddev, "prior_stddev", kLearn, Type::kNumber, nullptr, 0, kNoMax, false, false, "2",
     "a number >= 0 (0: no prior)", "standard deviation of the Gaussian prior on each weight; 0: none"},
    {Id::kInit, "init", kLearn, Type::kChoice, kLearnInitChoices, 0, 0, false, false, "tuffy", nullptr,
     "the starting weights: tuffy (ln(#satisfied / #violated) in the training world) or program (the current weights)"},
    {Id::kDevice, "device", kLearn, Type::kChoice, kDeviceChoices, 0, 0, false, false, "auto", nullptr,
     "the sampler's device: auto (the GPU for large components when there is one), cpu or gpu (--search-device)"},
    {Id::kLearningRate, "learning_rate", kLearn, Type::kNumber, nullptr, 0, kNoMax, true, false, "0.1", "a number > 0",
     "method perceptron: the step per unit of count difference"},
    // The functions' options: kDatalog, kProblog, kRules.
    {Id::kDevice, "device", kAnyFunction, Type::kChoice, kDeviceChoices, 0, 0, false, false, "", nullptr,
     "where the work runs: auto, cpu or gpu; not given: the mln.device setting"},
    {Id::kMaxRows, "max_rows", kDatalog | kProblog, Type::kInteger, nullptr, 0, kInt64Max, false, false, "100000000",
     "a whole number >= 0 (0: no limit)",
     "most rows one Datalog rule may derive (ProbLog: its grounding's Datalog program); past it, an error"},
    {Id::kSamples, "samples", kProblog, Type::kInteger, nullptr, 0, 1e12, false, false, "0",
     "a whole number >= 0 (0: the stopping rule)",
     "a fixed count of accepted samples; 0: until every query's 95% interval is narrower than delta"},
    {Id::kDelta, "delta", kProblog, Type::kNumber, nullptr, 0, 1, true, true, "0.01",
     "a number in (0, 1): the width of the 95% interval the stopping rule reaches",
     "the stopping rule: every query's 95% (Wilson) interval narrower than this"},
    {Id::kMaxSamples, "max_samples", kProblog, Type::kInteger, nullptr, 1, 1e12, false, false, "10000000", nullptr,
     "most samples drawn, accepted or not (a warning when the stopping rule is not reached by then)"},
    {Id::kSeed, "seed", kProblog, Type::kInteger, nullptr, 0, kInt64Max, false, false, "42", nullptr,
     "random seed: the answer is a function of the program, the options and the device"},
    {Id::kThreads, "threads", kProblog, Type::kInteger, nullptr, 0, 4096, false, false, "0",
     "a whole number in [0, 4096] (0: all cores)", "CPU threads of the sampler; 0: all cores (a worker: its --threads)"},
    {Id::kScore, "score", kRules, Type::kChoice, kRuleScoreChoices, 0, 0, false, false, "coverage", nullptr,
     "coverage (Aleph: definite clauses scored P - N) or wpll (weighted MLN clauses by pseudo-likelihood)"},
    {Id::kLink, "link", kRules, Type::kChoice, kRuleLinkChoices, 0, 0, false, false, "type", nullptr,
     "mln.learn_rules: columns join by SQL type, or by column name"},
    {Id::kMaxBody, "max_body", kRules, Type::kInteger, nullptr, 1, 1e9, false, false, "4", nullptr,
     "literals in a rule's body"},
    {Id::kMaxVars, "max_vars", kRules, Type::kInteger, nullptr, 1, 1e9, false, false, "6", nullptr,
     "variables in a rule, the head's included"},
    {Id::kBeam, "beam", kRules, Type::kInteger, nullptr, 1, 1e9, false, false, "8", nullptr,
     "candidates kept per refinement depth"},
    {Id::kMinPos, "min_pos", kRules, Type::kInteger, nullptr, 1, kInt64Max, false, false, "2", nullptr,
     "a rule covers at least this many of the positives left"},
    {Id::kNoise, "noise", kRules, Type::kInteger, nullptr, 0, kInt64Max, false, false, "0", nullptr,
     "and at most this many negatives"},
    {Id::kMaxRules, "max_rules", kRules, Type::kInteger, nullptr, 1, 1e9, false, false, "10", nullptr,
     "rules in the theory"},
    {Id::kRecursion, "recursion", kRules, Type::kBoolean, nullptr, 0, 0, false, false, "false", nullptr,
     "the target may appear in a body (coverage is then the theory's least fixpoint)"},
    {Id::kMaxConstants, "max_constants", kRules, Type::kInteger, nullptr, 0, 1e9, false, false, "8", nullptr,
     "a column with at most this many distinct values offers them as constants (0: none)"},
    {Id::kMaxRows, "max_rows", kRules, Type::kInteger, nullptr, 1, kInt64Max, false, false, "50000000", nullptr,
     "most binding rows one candidate may hold; a candidate past it is not refined"},
    {Id::kMinGain, "min_gain", kRules, Type::kNumber, nullptr, 0, kNoMax, false, false, "2", nullptr,
     "wpll: nats a clause must add to the log-likelihood"},
    {Id::kPenalty, "penalty", kRules, Type::kNumber, nullptr, 0, kNoMax, false, false, "1", nullptr,
     "wpll: nats charged per body literal"},
    {Id::kL2, "l2", kRules, Type::kNumber, nullptr, 0, kNoMax, false, false, "0.01", nullptr,
     "wpll: the Gaussian prior's precision on the clause weights"},
    {Id::kNegativesPerPositive, "negatives_per_positive", kRules, Type::kInteger, nullptr, 1, kInt64Max, false, false,
     "3", nullptr, "closed-world negatives drawn per positive when no negatives are given"},
    {Id::kSeed, "seed", kRules, Type::kInteger, nullptr, 0, kInt64Max, false, false, "1", nullptr,
     "seed of the closed-world negatives' sample"},
    {Id::kMaintain, "maintain", kDatalog, Type::kBoolean, nullptr, 0, 0, false, false, "false", nullptr,
     "mln.datalog: keep the target schema's tables current as the input tables change (triggers; see "
     "mln.datalog_maintained)"},
    {Id::kVerbose, "verbose", kAnyFunction, Type::kBoolean, nullptr, 0, 0, false, false, "false", nullptr,
     "progress as NOTICEs (a worker: log lines)"},
};

// ---- defaults --------------------------------------------------------------
// The solvers' option structs take their defaults from the table through
// these, at compile time: a default is written once, in its row.

namespace detail {
constexpr bool same(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
// A default's text as a number: [-]digits[.digits] (what the rows hold).
// Digits over a power of ten, so "0.005" is the double nearest 0.005, as
// strtod reads it.
constexpr double decimal(const char* t) {
  const bool neg = *t == '-';
  if (neg) ++t;
  double mant = 0, scale = 1;
  bool frac = false;
  for (; *t; ++t) {
    if (*t == '.') {
      frac = true;
      continue;
    }
    if (*t < '0' || *t > '9') throw std::logic_error("options table: a default is not a decimal number");
    mant = mant * 10 + (*t - '0');
    if (frac) scale *= 10;
  }
  return (neg ? -mant : mant) / scale;
}
}  // namespace detail

// The row of option `id` that applies to tasks `bits` (the first when
// several do); a missing row is a compile-time error where it is evaluated
// at compile time.
constexpr const Spec& row(Id id, unsigned bits) {
  for (const Spec& s : kSpecs)
    if (s.id == id && (s.tasks & bits)) return s;
  throw std::logic_error("options table: no row for this id and task");
}
constexpr double default_number(Id id, unsigned bits) { return detail::decimal(row(id, bits).def); }
constexpr int64_t default_integer(Id id, unsigned bits) {
  return static_cast<int64_t>(detail::decimal(row(id, bits).def));
}
constexpr bool default_boolean(Id id, unsigned bits) { return detail::same(row(id, bits).def, "true"); }
template <class E>
constexpr E default_choice(Id id, unsigned bits) {
  const Spec& s = row(id, bits);
  for (size_t i = 0; ChoiceNames<E>::names[i]; ++i)
    if (detail::same(ChoiceNames<E>::names[i], s.def)) return static_cast<E>(i);
  throw std::logic_error("options table: a default is not one of its choices");
}
// The default of option `id` for tasks `bits` as the field type T: a
// choice's enum, a boolean or a number.
template <class T>
constexpr T default_of(Id id, unsigned bits) {
  if constexpr (std::is_enum_v<T>) return default_choice<T>(id, bits);
  else if constexpr (std::is_same_v<T, bool>) return default_boolean(id, bits);
  else return static_cast<T>(detail::decimal(row(id, bits).def));
}

// A validation error: message names the option, hint what it may be.
struct OptionError : std::invalid_argument {
  OptionError(const std::string& message, std::string hint)
      : std::invalid_argument(message), hint(std::move(hint)) {}
  std::string hint;
};

// One JSON value of an options object: its kind, its text as JSON (what
// error messages quote) and, for a string, its contents.
struct JsonValue {
  enum Kind : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  std::string json;
  std::string str;
};

// A checked value: the field of its type is set (a choice: `integer` is
// its index in the row's choices, `text` its name).
struct Value {
  bool set = false;
  int64_t integer = 0;
  double number = 0;
  bool boolean = false;
  std::string text;
};

// A job's checked options by id; an option not given (or JSON null, which
// means its default) is not set.
class Values {
 public:
  bool has(Id id) const { return v_[idx(id)].set; }
  int64_t integer(Id id) const { return v_[idx(id)].integer; }
  double number(Id id) const { return v_[idx(id)].number; }
  bool boolean(Id id) const { return v_[idx(id)].boolean; }
  const std::string& text(Id id) const { return v_[idx(id)].text; }
  template <class E>
  E choice(Id id) const {
    return static_cast<E>(v_[idx(id)].integer);
  }
  void put(Id id, Value v) { v_[idx(id)] = std::move(v); }

 private:
  static size_t idx(Id id) { return static_cast<size_t>(id); }
  std::array<Value, kIdCount> v_{};
};

// The Task bits of a job's task (map, marginal, dual, learn); 0 for others.
unsigned task_bits(std::string_view task);
// The row of option `name` that applies to tasks `bits`; nullptr if none.
const Spec* find(std::string_view name, unsigned bits);
// The row of option `id` that applies to tasks `bits` (the first when
// several do); nullptr if none.
const Spec* find(Id id, unsigned bits);
// Names of the tasks a row applies to, as mln.options() shows them: map,
// marginal, infer (map, marginal and dual), learn, or all; for the
// functions' rows, "datalog", "problog, rules", ...
std::string task_name(unsigned tasks);
// "integer", "number", "boolean" or "text".
const char* type_name(Type t);
// What a value of `s` must be: its `allowed`, "true or false", the
// choices ("auto, cpu or gpu"; quoted: "'auto', 'cpu' or 'gpu'", as the
// functions' messages write them) or the range ("a whole number >= 1").
std::string allowed_text(const Spec& s, bool quoted = false);
// The index of `v` among the choices of a kChoice row; -1 when it is none.
int choice_index(const Spec& s, std::string_view v);
inline bool is_choice(const Spec& s, std::string_view v) { return choice_index(s, v) >= 0; }
// The options of the rows `bits` names, in table order, comma-separated
// ("a, b and c" with `listed`; a choice row with its choices when `with_choices`).
std::string option_names(unsigned bits, bool listed = false, bool with_choices = false);

// Whether `v` is within the row's range (lo, hi, open or not).
bool in_range(const Spec& s, double v);
// A numeric value within its row's range (kInteger also integral); throws
// OptionError otherwise.  For the solver's own checks of typed options.
void check_range(const Spec& s, double v);

// The top-level members of a JSON object, in order (a repeated key keeps
// its last value).  Throws OptionError when `json` is not an object.
std::vector<std::pair<std::string, JsonValue>> parse_object(std::string_view json);

// Checks one value of option `s` for tasks `bits` (the kind of job named in
// messages: inference or learning).  JSON null is the default (not set).
Value check(const Spec& s, const JsonValue& v, unsigned bits);

// The Task bits of an inference task (map, marginal, dual); throws
// OptionError naming the tasks for anything else (task: nullptr for none).
unsigned infer_task_bits(const char* task);

// Checks a job's options object (JSON text) for tasks `bits` and decodes
// it.  Throws OptionError when the text is not an object, for an option
// that does not apply to the task, and for a bad value.
Values decode(unsigned bits, std::string_view options_json);

}  // namespace mln::options
