// Parsing of Tuffy-compatible flags.
#include "cli/options.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "options/options.hpp"

namespace mln::cli {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

namespace {

// The flags that set a job option: its key in the options table, and for a
// flag without a value the value it sets.  Each option's type, range,
// default and doc are the table's (options/options.hpp).
struct JobFlag {
  const char* flag;
  const char* key;
  const char* fixed;  // a flag without a value: the value it sets; else nullptr
};
constexpr JobFlag kJobFlags[] = {
    {"-maxFlips", "max_flips", nullptr},         {"-maxTries", "max_tries", nullptr},
    {"-timeout", "timeout", nullptr},            {"-threads", "threads", nullptr},
    {"-randomStep", "random_step", nullptr},     {"-mcsatSamples", "samples", nullptr},
    {"-mcsatParam", "mcsat_param", nullptr},     {"-sa", "sa_temperature", nullptr},
    {"-dMaxIter", "iterations", nullptr},        {"--search-device", "device", nullptr},
    {"--solver", "solver", nullptr},             {"--ilp-seconds", "ilp_seconds", nullptr},
    {"--gap-tolerance", "gap_tolerance", nullptr}, {"--cpu-walk", "cpu_walk", nullptr},
    {"--exact-max-atoms", "exact_max_atoms", nullptr}, {"--seed", "seed", nullptr},
    {"-dontBreak", "dont_break", "true"},        {"-nopush", "skip_components_without_query", "false"},
};

const JobFlag* job_flag(const std::string& flag) {
  for (const JobFlag& f : kJobFlags)
    if (flag == f.flag) return &f;
  return nullptr;
}

// The value a flag set, "" when none did.
std::string given_option(const Options& o, const std::string& key) {
  for (auto it = o.job.rbegin(); it != o.job.rend(); ++it)
    if (it->first == key) return it->second;
  return "";
}

// The job flags, a line each, from the options table: what the option does
// and its default (or, for a flag without a value, what it sets).
std::string job_flags_help() {
  std::string h = "Job options (mln.options() lists them; the default in brackets):\n";
  for (const JobFlag& f : kJobFlags) {
    const options::Spec* s = options::find(f.key, options::kAnyTask);
    const std::string def = f.fixed ? std::string(f.key) + " = " + f.fixed : s->def;
    std::string flag = f.flag;
    flag.resize(std::max<size_t>(flag.size(), 18), ' ');
    std::string doc = s->doc;  // the table's docs end with the Tuffy flag, which the line starts with
    const std::string own = std::string(" (") + f.flag + ")";
    if (doc.size() > own.size() && doc.compare(doc.size() - own.size(), own.size(), own) == 0)
      doc.resize(doc.size() - own.size());
    h += "  " + flag + " " + doc + " [" + def + "]\n";
  }
  return h;
}

}  // namespace

std::string usage() {
  return "usage: pg_mln -i prog.mln[,more.mln] -r out.txt [-e evidence.db[,...]] [-queryFile q.db | -q 'P(x),Q']\n"
         "              [-cw P,Q] [-maxFlips N] [-maxTries N] [-timeout S] [-threads N] [-randomStep P]\n"
         "              [-dontBreak] [-activateAll] [-keepData] [-verbose 0-3] [-conf tuffy.conf] [-gz]\n"
         "              [-marginal | -dual | -learnwt [-dMaxIter N] | -learnrules PRED [-ruleOptions JSON]]\n"
         "              [-mcsatSamples N] [-mcsatParam X] [-sa X] [-minProb P]\n"
         "              [-printResultsAsPrologFacts]\n"
         "              [--dsn CONNINFO] [--device auto|cpu|gpu|sql] [--search-device auto|cpu|gpu] [--seed N]\n"
         "              [--exact-max-atoms 0-20] [--solver auto|walksat|ilp] [--ilp-seconds S]\n"
         "              [--cpu-walk auto|walksat|weighted] [--gap-tolerance F]\n"
         "              [--workdir DIR] [--version]\n"
         "       pg_mln -problog program.pl [-o out.tsv] [-problogOptions JSON] [--device auto|cpu|gpu]\n"
         "              [--dsn CONNINFO | -conf tuffy.conf | --workdir DIR] [-verbose 0-3]\n"
         "       pg_mln --stop-server\n"
         "Without --dsn, -conf or PG* environment variables, pg_mln uses a private PostgreSQL server that it\n"
         "keeps running between runs (~/.cache/pg_mln/server; `make demo`'s cluster when that one is up),\n"
         "starting it only when none is running; each run removes the data it created. --stop-server stops\n"
         "the kept server. With --workdir DIR, a throwaway cluster in DIR is started and removed instead.\n"
         "-problog: answers a ProbLog / CP-logic program's queries by forward sampling (mln.problog,\n"
         "docs/problog.md), one line per query atom: query<TAB>probability<TAB>ci_low<TAB>ci_high<TAB>samples\n"
         "(the 95% interval; the samples that satisfy the evidence), to -o or else to stdout. -problogOptions\n"
         "takes mln.problog's options ('{\"samples\": 100000, \"delta\": 0.005, \"seed\": 7, \"threads\": 1}').\n" +
         job_flags_help();
}

std::string inference_task(const Options& o) {
  return o.learnwt ? "learn" : o.dual ? "dual" : o.marginal ? "marginal" : "map";
}

std::string job_option(const Options& o, const std::string& key) {
  const std::string v = given_option(o, key);
  if (!v.empty()) return v;
  const options::Spec* s = options::find(key, options::task_bits(inference_task(o)));
  return s ? s->def : "";
}

std::string job_options_json(const Options& o) {
  const unsigned bits = options::task_bits(inference_task(o));
  std::map<std::string, std::string> v;
  for (const auto& [key, text] : o.job) v[key] = text;  // a later flag wins
  v["device"] = o.search_device;
  std::string j = "{";
  for (const auto& [key, text] : v) {
    const options::Spec* s = options::find(key, bits);
    if (!s) continue;  // an option the task does not read (its value was checked)
    j += (j.size() > 1 ? ", \"" : "\"") + key + "\": " + (s->type == options::Type::kChoice ? "\"" + text + "\"" : text);
  }
  return j + "}";
}

namespace {

// Numeric conversion with a clear message.
long long to_ll(const std::string& flag, const std::string& v) {
  try {
    size_t pos;
    long long x = std::stoll(v, &pos);
    if (pos != v.size()) throw std::invalid_argument("");
    return x;
  } catch (...) {
    throw std::invalid_argument("option " + flag + " expects an integer, got \"" + v + "\"");
  }
}
double to_d(const std::string& flag, const std::string& v) {
  try {
    size_t pos;
    double x = std::stod(v, &pos);
    if (pos != v.size()) throw std::invalid_argument("");
    return x;
  } catch (...) {
    throw std::invalid_argument("option " + flag + " expects a number, got \"" + v + "\"");
  }
}

// A job flag's value as JSON writes it: an integer or a number read (and
// written back) by the option's type in the table, a choice as given.
std::string job_value(const std::string& flag, const char* key, const std::string& text) {
  const options::Spec* s = options::find(key, options::kAnyTask);
  if (s->type == options::Type::kInteger) return std::to_string(to_ll(flag, text));
  if (s->type == options::Type::kNumber) {
    std::ostringstream n;
    n.precision(17);
    n << to_d(flag, text);
    return n.str();
  }
  return text;
}

// Checks the job options given as flags (flag, its value) through the
// options table, as mln.infer and mln.learn_weights will: a value they
// refuse is refused here, naming the flag.
void check_job_flags(const std::vector<std::pair<std::string, std::string>>& given, unsigned bits) {
  for (const auto& [flag, text] : given) {
    const char* key = job_flag(flag)->key;
    // The row of the job's task, else any (a flag that the task ignores
    // must still hold a valid value).
    const options::Spec* s = options::find(key, bits);
    if (!s) s = options::find(key, options::kAnyTask);
    options::JsonValue v;
    v.kind = s->type == options::Type::kChoice ? options::JsonValue::kString : options::JsonValue::kNumber;
    v.json = v.kind == options::JsonValue::kString ? "\"" + text + "\"" : text;
    v.str = text;
    try {
      options::check(*s, v, bits);
    } catch (const options::OptionError&) {
      throw std::invalid_argument(flag + " must be " + options::allowed_text(*s) + " (got \"" + text + "\")");
    }
  }
}

// -problog runs mln.problog on one file (docs/problog.md): the flags that
// name the database, the output and the grounding device apply; every other
// flag is Tuffy's MLN inference or learning and is refused, named, rather
// than silently ignored.
void check_problog_flags(const Options& o, const std::vector<std::string>& seen) {
  static const std::set<std::string> applies = {"-problog", "-problogOptions", "-r",  "-o",
                                                "-result",  "--dsn",           "-dsn", "-conf",
                                                "--workdir", "-verbose",       "--device"};
  for (const std::string& a : seen)
    if (!applies.count(a))
      throw std::invalid_argument("option " + a + " does not apply to -problog (mln.problog's options go in "
                                  "-problogOptions '{\"samples\": 100000, \"seed\": 7}'; docs/problog.md)");
  if (o.device != "auto" && o.device != "cpu" && o.device != "gpu")
    throw std::invalid_argument("--device must be auto, cpu or gpu with -problog (got \"" + o.device + "\")");
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  // Tuffy's research, MLE and SGD flags (they change no MAP, marginal or
  // learning answer): accepted and ignored, each with its arity in Tuffy's
  // CommandOptions (args4j: a boolean takes no value, any other type one),
  // so that the value of one is not taken for an option.
  static const std::set<std::string> ignored_bool = {"-snap", "-partComponent", "-small", "-log", "-debug", "-gp",
                                                     "-dbNeedTranslate", "-mcsatCumulative", "-rawString", "-jt",
                                                     "-key", "-gibbs", "-mcsat"};
  static const std::set<std::string> ignored_val = {"-iterSpan", "-gibbsThinning", "-sgdStepSize", "-sgdDecay",
                                                    "-sgdMetaSample", "-sgdMU", "-softT", "-dribble",
                                                    "-lineHeader", "-mcsatDumpInt", "-innerPara", "-serialmix"};
  std::vector<std::pair<std::string, std::string>> given;  // job options as flags: flag, value
  std::vector<std::string> seen;  // every flag, in order (-problog refuses those that do not apply)
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    seen.push_back(a);
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument("option " + a + " needs a value");
      return argv[++i];
    };
    if (const JobFlag* jf = job_flag(a)) {
      o.job.emplace_back(jf->key, jf->fixed ? jf->fixed : job_value(a, jf->key, val()));
      if (!jf->fixed) given.emplace_back(a, o.job.back().second);
      // (a value past int is refused by check_job_flags below, naming the flag)
      if (o.job.back().first == "threads") o.threads = static_cast<int>(std::stoll(o.job.back().second));
      if (o.job.back().first == "device") o.search_device = o.job.back().second;
      continue;
    }
    if (a == "-i" || a == "-mln") for (auto& f : split_commas(val())) o.program_files.push_back(f);
    else if (a == "-e" || a == "-evidence") for (auto& f : split_commas(val())) o.evidence_files.push_back(f);
    else if (a == "-queryFile") for (auto& f : split_commas(val())) o.query_files.push_back(f);
    else if (a == "-q" || a == "-query") o.query_atoms += (o.query_atoms.empty() ? "" : ",") + val();
    else if (a == "-r" || a == "-o" || a == "-result") o.output = val();
    else if (a == "-conf") o.conf = val();
    else if (a == "-db") o.db_schema = val();
    else if (a == "-cw" || a == "-closedWorld") for (auto& p : split_commas(val())) o.closed_world.push_back(p);
    else if (a == "-verbose") o.verbose = static_cast<int>(to_ll(a, val()));
    else if (a == "-activateAll") o.activate_all = true;
    else if (a == "-keepData") o.keep_data = true;
    else if (a == "-gz") o.gz = true;
    else if (a == "-nopart")
      o.notes.push_back("-nopart changes nothing here: pg_mln walks each connected component whole, as Tuffy does "
                        "without partitions (it splits only components beyond 64M atoms)");
    else if (a == "-marginal") o.marginal = true;
    else if (a == "-dual") o.dual = true;
    else if (a == "-minProb") o.min_prob = to_d(a, val());
    else if (a == "-printResultsAsPrologFacts") o.prolog_facts = true;
    else if (a == "-learnwt") o.learnwt = true;
    else if (a == "-learnrules") o.learn_rules = val();
    else if (a == "-ruleOptions") o.rule_options = val();
    else if (a == "-problog") o.problog = val();
    else if (a == "-problogOptions") o.problog_options = val();
    else if (a == "--dsn" || a == "-dsn") o.dsn = val();
    else if (a == "--device") o.device = val();
    else if (a == "--workdir") o.work_dir = val();
    else if (a == "-help" || a == "--help" || a == "-h") o.help = true;
    else if (a == "--version") o.version = true;
    else if (a == "--stop-server") o.stop_server = true;
    else if (a == "-mle")
      throw std::invalid_argument("option -mle (Tuffy's experimental MLE sampler) is not supported by pg_mln; "
                                  "-marginal gives MC-SAT marginals and the default mode the most likely world");
    else if (ignored_bool.count(a)) continue;
    else if (ignored_val.count(a)) (void)val();
    else throw std::invalid_argument("unknown option \"" + a + "\"");
  }
  if (o.help || o.version || o.stop_server) return o;
  if (o.verbose < 0 || o.verbose > 3) throw std::invalid_argument("-verbose must be 0, 1, 2 or 3");
  if (!o.problog.empty()) {
    check_problog_flags(o, seen);
    return o;
  }
  if (!o.problog_options.empty()) throw std::invalid_argument("-problogOptions applies to -problog");
  if (o.program_files.empty()) throw std::invalid_argument("option -i (program file) is required");
  if (o.output.empty()) throw std::invalid_argument("option -r (output file) is required");
  if (!o.learn_rules.empty()) {
    if (o.marginal || o.dual || o.learnwt)
      throw std::invalid_argument("-learnrules cannot be combined with -marginal, -dual or -learnwt");
    if (!given.empty())
      throw std::invalid_argument("option " + given[0].first + " applies to inference, not to -learnrules "
                                  "(its options go in -ruleOptions '{\"score\": \"wpll\"}')");
  } else if (o.rule_options != "{}") {
    throw std::invalid_argument("-ruleOptions applies to -learnrules");
  }
  if (o.query_files.empty() && o.query_atoms.empty() && o.learn_rules.empty())
    throw std::invalid_argument("a query is required: give -queryFile or -q");
  if (!(o.min_prob >= 0 && o.min_prob <= 1)) throw std::invalid_argument("-minProb must be within [0, 1]");
  if (o.learnwt && (o.marginal || o.dual)) throw std::invalid_argument("-learnwt cannot be combined with -marginal or -dual");
  if (o.device != "auto" && o.device != "cpu" && o.device != "gpu" && o.device != "sql")
    throw std::invalid_argument("--device must be auto, cpu, gpu or sql");
  if (o.search_device.empty()) o.search_device = (o.device == "cpu" || o.device == "sql") ? "cpu" : "auto";
  check_job_flags(given, options::task_bits(inference_task(o)));
  const std::string walk = given_option(o, "cpu_walk");
  if (!walk.empty() && walk != "auto" && (o.marginal || o.learnwt))
    throw std::invalid_argument("--cpu-walk applies to MAP inference (and -dual), not to -marginal or -learnwt");
  return o;
}

}  // namespace mln::cli
