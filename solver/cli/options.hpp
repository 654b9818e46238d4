// Tuffy's command-line options (docs/tuffy-reference.md §9), as pg_mln
// accepts them.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mln::cli {

struct Options {
  std::vector<std::string> program_files;   // -i / -mln (comma-separated)
  std::vector<std::string> evidence_files;  // -e / -evidence
  std::vector<std::string> query_files;     // -queryFile
  std::string query_atoms;                  // -q / -query
  std::string output;                       // -r / -o / -result
  std::string conf;                         // -conf
  std::string dsn;                          // --dsn (pg_mln extension)
  std::string db_schema;                    // -db (accepted; see README)
  std::vector<std::string> closed_world;    // -cw
  // The job options the flags set (kJobFlags in options.cpp: -maxFlips,
  // -dontBreak, --solver, ...): the options table's key and its value, as
  // JSON writes it, in flag order (a later flag wins).  An option no flag
  // set takes the table's default in mln.infer / mln.learn_weights.
  std::vector<std::pair<std::string, std::string>> job;
  int threads = 0;                          // -threads (also the command line's own worker's)
  bool activate_all = false;                // -activateAll
  bool keep_data = false;                   // -keepData
  bool gz = false;                          // -gz
  bool marginal = false;                    // -marginal: MC-SAT marginals instead of MAP
  bool dual = false;                        // -dual: MAP to out.map, then marginals to out.marginal
  double min_prob = 0;                      // -minProb (marginal output threshold)
  bool prolog_facts = false;                // -printResultsAsPrologFacts
  bool learnwt = false;                     // -learnwt: learn the weights (evidence of the query predicates = training world)
  std::string learn_rules;                  // -learnrules PRED: learn rules for PRED from the evidence (docs/rules.md)
  std::string rule_options = "{}";          // -ruleOptions JSON: mln.learn_rules_from's options
  std::string problog;                      // -problog FILE: a ProbLog program for mln.problog (docs/problog.md)
  std::string problog_options;              // -problogOptions JSON: mln.problog's options (empty: none given)
  int verbose = 0;                          // -verbose
  std::string device = "auto";              // --device: grounding operators (pg_mln extension)
  std::string search_device;                // --search-device (default: cpu with --device cpu, else auto)
  std::string work_dir;                     // --workdir (pg_mln extension)
  bool help = false;
  bool version = false;
  bool stop_server = false;                 // --stop-server: stop the kept private server
  std::vector<std::string> notes;           // said before the run (a Tuffy flag that changes nothing here)
};

// Parses argv; throws std::invalid_argument with a user-facing message.
Options parse_options(int argc, char** argv);
// The usage text.
std::string usage();
// The task the flags ask for: "learn" (-learnwt), "map", "marginal"
// (-marginal) or "dual" (-dual; it wins over -marginal).
std::string inference_task(const Options& o);
// The options of mln.infer (or mln.learn_weights) for that task, as a JSON
// object: every job option a flag set that the task reads, and the device.
std::string job_options_json(const Options& o);
// A job option's value for the flags' task: the flag's, else the options
// table's default ("" when the task has no such option).
std::string job_option(const Options& o, const std::string& key);
// Splits "a,b,c" (Tuffy's comma-separated file lists).
std::vector<std::string> split_commas(const std::string& s);

}  // namespace mln::cli
