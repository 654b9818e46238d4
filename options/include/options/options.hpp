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
#include <utility>
#include <vector>

namespace mln::options {

// The tasks a job runs, as bits: an option applies to a job when their
// bits meet (a dual job is kMap | kMarginal).
enum Task : unsigned { kMap = 1, kMarginal = 2, kLearn = 4, kInfer = kMap | kMarginal, kAnyTask = 7 };

enum class Type : uint8_t { kInteger, kNumber, kBoolean, kChoice };

// Every option name; an option whose rules differ between inference and
// learning (samples, device) has one row per side, both with its id.
enum class Id : uint8_t {
  kMaxFlips, kTimeout, kSeed, kThreads, kDevice, kRandomStep, kSkipComponentsWithoutQuery, kExactMaxAtoms,
  kPartitions, kMaxTries, kDontBreak, kSolver, kIlpSeconds, kCpuWalk, kRounds, kGapTolerance, kSamples, kBurnIn,
  kMcsatParam, kSaTemperature, kMethod, kIterations, kPriorStddev, kInit, kLearningRate,
  kCount
};
constexpr size_t kIdCount = static_cast<size_t>(Id::kCount);

struct Spec {
  Id id;
  const char* name;
  unsigned tasks;       // Task bits
  Type type;
  const char* choices;  // kChoice: the allowed values, "a|b|c"
  double lo, hi;        // kInteger, kNumber: the range (hi: infinity when unbounded)
  bool lo_open;         // lo itself is not allowed
  const char* def;      // the default, as mln.options() shows it
  const char* allowed;  // what a value must be (kInteger, kNumber), completing "<name> must be ..."
  const char* doc;      // what the option does, one line
};

constexpr double kNoMax = std::numeric_limits<double>::infinity();
constexpr double kInt32Max = 2147483647.0;
constexpr double kInt64Max = 9223372036854775807.0;

// In the order the hints list them: every inference task's, MAP's, the
// marginal's, learning's.
inline constexpr Spec kSpecs[] = {
    {Id::kMaxFlips, "max_flips", kInfer, Type::kInteger, nullptr, 0, kInt64Max, false, "0",
     "an integer >= 0 (0: 100 x atoms)",
     "flips per try over the network (MAP) or per SampleSAT call (marginal); 0: 100 x atoms (-maxFlips)"},
    {Id::kTimeout, "timeout", kAnyTask, Type::kNumber, nullptr, 0, kNoMax, false, "0", "seconds >= 0 (0: none)",
     "wall-clock limit of the job in seconds; the answer so far is kept (-timeout)"},
    {Id::kSeed, "seed", kAnyTask, Type::kInteger, nullptr, 0, kInt64Max, false, "1", "an integer >= 0",
     "random seed: an answer is a function of the network, the options and the seed (--seed)"},
    {Id::kThreads, "threads", kAnyTask, Type::kInteger, nullptr, 0, 4096, false, "0",
     "an integer from 0 (all cores) to 4096", "CPU threads; 0: the worker's --threads, else all cores (-threads)"},
    {Id::kDevice, "device", kInfer, Type::kChoice, "auto|cpu|gpu", 0, 0, false, "auto", nullptr,
     "where the search, the sampling and the LP bound run: auto (the GPU for large components when there is one), cpu, or gpu "
     "(fails without a usable GPU) (--search-device)"},
    {Id::kRandomStep, "random_step", kInfer, Type::kNumber, nullptr, 0, 1, false, "0.5", "a probability within [0, 1]",
     "probability of a random walk step; when not given, MAP lowers it from 0.5 over the tries (-randomStep)"},
    {Id::kSkipComponentsWithoutQuery, "skip_components_without_query", kInfer, Type::kBoolean, nullptr, 0, 0, false,
     "true", nullptr, "leave components without a query atom unsolved, as Tuffy does (false: -nopush)"},
    {Id::kExactMaxAtoms, "exact_max_atoms", kAnyTask, Type::kInteger, nullptr, 0, 20, false, "12",
     "an integer from 0 (off) to 20",
     "components of at most this many atoms are solved, sampled or counted exactly, by enumeration (--exact-max-atoms)"},
    {Id::kPartitions, "partitions", kInfer, Type::kInteger, nullptr, 0, 4096, false, "0",
     "an integer from 0 (auto: whole components over the connected workers, for networks of 10^6 clauses or more) "
     "to 4096 (1: one worker)",
     "parts one job is spread over, each solved by whichever worker claims it"},
    {Id::kMaxTries, "max_tries", kMap, Type::kInteger, nullptr, 1, kInt32Max, false, "3", "an integer >= 1",
     "WalkSAT tries, each from the best state so far (-maxTries)"},
    {Id::kDontBreak, "dont_break", kMap, Type::kBoolean, nullptr, 0, 0, false, "false", nullptr,
     "never flip an atom whose flip violates a hard clause (-dontBreak)"},
    {Id::kSolver, "solver", kMap, Type::kChoice, "auto|walksat|ilp", 0, 0, false, "auto", nullptr,
     "auto (MaxWalkSAT, then the exact ILP path within ilp_seconds), walksat (MaxWalkSAT only) or ilp (the exact "
     "path only) (--solver)"},
    {Id::kIlpSeconds, "ilp_seconds", kMap, Type::kNumber, nullptr, 0, kNoMax, false, "10",
     "seconds >= 0 (0: off)",
     "solver auto: the exact path's time for the whole job in seconds (--ilp-seconds)"},
    {Id::kCpuWalk, "cpu_walk", kMap, Type::kChoice, "auto|walksat|weighted", 0, 0, false, "auto", nullptr,
     "the walk on CPU threads: auto (weighted for components of 1,000 atoms or more, walksat below), walksat "
     "(Tuffy's MaxWalkSAT) or weighted (the GPU's weighted walk) (--cpu-walk)"},
    {Id::kRounds, "rounds", kMap, Type::kInteger, nullptr, 1, 1000, false, "30",
     "an integer from 1 to 1000 (rounds over the parts that share clauses)",
     "a job spread over parts: rounds over the parts that share clauses (default 30 where the parts' walks are kept "
     "between rounds, else 3)"},
    {Id::kGapTolerance, "gap_tolerance", kMap, Type::kNumber, nullptr, 0, 1, false, "0.005",
     "a fraction within [0, 1]",
     "solver auto: an answer whose gap to its lower bound is within this fraction is returned (--gap-tolerance)"},
    {Id::kSamples, "samples", kMarginal, Type::kInteger, nullptr, 1, kInt32Max, false, "100",
     "a positive integer (samples per component)", "MC-SAT samples counted per component (-mcsatSamples)"},
    {Id::kBurnIn, "burn_in", kMarginal, Type::kInteger, nullptr, 0, kInt32Max, false, "0",
     "an integer >= 0 (MC-SAT steps before counting)", "MC-SAT steps before samples are counted"},
    {Id::kMcsatParam, "mcsat_param", kMarginal, Type::kNumber, nullptr, 0, kNoMax, true, "1",
     "a number > 0 (a satisfied clause is kept with probability 1 - exp(-|w| x))",
     "a satisfied clause is kept with probability 1 - exp(-|w| x) (-mcsatParam)"},
    {Id::kSaTemperature, "sa_temperature", kMarginal, Type::kNumber, nullptr, 0, kNoMax, true, "10",
     "a number > 0 (SampleSAT's simulated-annealing coefficient)",
     "SampleSAT's simulated-annealing coefficient (-sa)"},
    {Id::kMethod, "method", kLearn, Type::kChoice, "dn|perceptron", 0, 0, false, "dn", nullptr,
     "dn (diagonal Newton on MC-SAT counts) or perceptron (voted perceptron on MAP counts)"},
    {Id::kIterations, "iterations", kLearn, Type::kInteger, nullptr, 1, 100000, false, "100",
     "an integer from 1 to 100000", "learning iterations (-dMaxIter)"},
    {Id::kSamples, "samples", kLearn, Type::kInteger, nullptr, 1, kInt32Max, false, "100",
     "a positive integer (MC-SAT samples per iteration)", "MC-SAT samples per iteration and component (-mcsatSamples)"},
    {Id::kPriorStddev, "prior_stddev", kLearn, Type::kNumber, nullptr, 0, kNoMax, false, "2",
     "a number >= 0 (0: no prior)", "standard deviation of the Gaussian prior on each weight; 0: none"},
    {Id::kInit, "init", kLearn, Type::kChoice, "tuffy|program", 0, 0, false, "tuffy", nullptr,
     "the starting weights: tuffy (ln(#satisfied / #violated) in the training world) or program (the current weights)"},
    {Id::kDevice, "device", kLearn, Type::kChoice, "auto|cpu|gpu", 0, 0, false, "auto", nullptr,
     "the sampler's device: auto (the GPU for large components when there is one), cpu or gpu (--search-device)"},
    {Id::kLearningRate, "learning_rate", kLearn, Type::kNumber, nullptr, 0, kNoMax, true, "0.1", "a number > 0",
     "method perceptron: the step per unit of count difference"},
};

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

// A checked value: the field of its type is set.
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
// marginal, infer (map, marginal and dual), learn, or all.
const char* task_name(unsigned tasks);
// "integer", "number", "boolean" or "text".
const char* type_name(Type t);
// What a value of `s` must be: its `allowed`, "true or false", or the
// choices ("auto, cpu or gpu").
std::string allowed_text(const Spec& s);
// Whether `v` is one of the choices of a kChoice row.
bool is_choice(const Spec& s, std::string_view v);

// A numeric value within its row's range (kInteger also integral); throws
// OptionError otherwise.  For the solver's own checks of typed options.
void check_range(const Spec& s, double v);
// The string value of a kChoice option (for the solver's own checks).
void check_choice(const Spec& s, std::string_view v);

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
