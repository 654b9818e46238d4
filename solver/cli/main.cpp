// pg_mln: Tuffy-compatible command line over the pg_mln extension.
//
//   pg_mln -i prog.mln -e evidence.db -queryFile query.db -r out.txt
//
// Loads the program and evidence into PostgreSQL (a private cluster when no
// database is named), grounds inside the database, runs the worker for MAP
// inference (-marginal: MC-SAT marginals; -dual: both), and writes Tuffy's
// output format.  -problog FILE answers a ProbLog program instead
// (problog_mode.cpp).
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/database.hpp"
#include "cli/embedded.hpp"
#include "cli/job_follow.hpp"
#include "cli/options.hpp"
#include "cli/output.hpp"
#include "cli/paths.hpp"
#include "cli/problog_mode.hpp"
#include "cli/progress.hpp"
#include "cli/server.hpp"
#include "lang/program.hpp"
#include "worker/pq.hpp"
#include "worker/worker.hpp"

namespace {

using Clock = std::chrono::steady_clock;
std::atomic<bool> g_interrupted{false};
void on_signal(int) { g_interrupted = true; }

// Reads a whole file; throws with the file name.
std::string read_file(const std::string& path, const char* what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + std::string(what) + " file " + path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

using mln::cli::say;

struct Phase {
  std::string name;
  double seconds;
};

// The program's name in the database: one per run (the process id), so that
// runs on one database do not meet.  Messages name it as user_terms says.
std::string program_name() { return "tuffy_" + std::to_string(getpid()); }

// A server message in the user's terms: the program is the one -i names,
// not the name this run gave it in the database.
std::string user_terms(std::string msg, const mln::cli::Options& o) {
  const std::string prog = program_name();
  std::string files;
  for (const auto& f : o.program_files) files += (files.empty() ? "" : ",") + f;
  const std::string ours = "the program (-i " + files + ")";
  auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (const std::string& name : {"program \"" + prog + "\"", "\"" + prog + "\"", "'" + prog + "'", prog}) {
    for (size_t at = msg.find(name); at != std::string::npos; at = msg.find(name, at)) {
      const size_t end = at + name.size();
      // A schema (mln_tuffy_1) or another name that merely contains it stays.
      if ((at > 0 && ident(msg[at - 1]) && ident(name[0])) || (end < msg.size() && ident(msg[end]))) {
        at = end;
        continue;
      }
      msg.replace(at, name.size(), ours);
      at += ours.size();
    }
  }
  return msg;
}

// Sends large evidence files through COPY in line-aligned chunks, then
// ingests them server-side (the streaming path).
long long load_evidence_file(mln::worker::Conn& c, const std::string& prog, const std::string& path) {
  std::string text = read_file(path, "evidence");
  c.exec("SELECT mln.evidence_staging($1)", {prog});
  mln::worker::Result s = c.exec("SELECT schema_name FROM mln.programs WHERE name = $1", {prog});
  std::string table = c.quote_ident(s.get(0, 0)) + "._staging";
  size_t pos = 0;
  int seq = 0, line = 1;
  mln::cli::ProgressBar bar("loading");  // the COPY of a large evidence file
  c.copy_in("COPY " + table + " (seq, first_line, body) FROM STDIN", [&](std::string& out) {
    bar.update(static_cast<int>(100.0 * static_cast<double>(pos) / static_cast<double>(std::max<size_t>(1, text.size()))),
               "evidence");
    if (pos >= text.size()) return false;
    size_t end = std::min(text.size(), pos + (4u << 20));
    if (end < text.size()) {
      size_t nl = text.find('\n', end);
      end = nl == std::string::npos ? text.size() : nl + 1;
    }
    out = std::to_string(seq++) + "\t" + std::to_string(line) + "\t";
    for (size_t i = pos; i < end; ++i) {
      char ch = text[i];
      if (ch == '\n') { out += "\\n"; ++line; }
      else if (ch == '\\') out += "\\\\";
      else if (ch == '\t') out += "\\t";
      else if (ch == '\r') out += "\\r";
      else out += ch;
    }
    out += "\n";
    pos = end;
    return true;
  });
  bar.clear();
  mln::worker::Result r = c.exec("SELECT mln.ingest_evidence($1)", {prog});
  return r.num(0, 0);
}

// Parses the program and query files locally: errors then name the file,
// line and column.  Returns the program's text; `query_text` receives the query.
std::string parse_locally(const mln::cli::Options& o, std::string& query_text) {
  std::string program_text;
  mln::lang::Program all;
  for (const auto& f : o.program_files) {
    say(">>> Parsing program file: " + f);
    std::string txt = read_file(f, "program");
    try {
      mln::lang::parse_program_into(all, txt);
    } catch (const mln::lang::LangError& e) {
      throw std::runtime_error(f + ": " + e.where_what());
    }
    program_text += txt + "\n";
  }
  for (const auto& f : o.query_files) {
    say(">>> Parsing query file: " + f);
    std::string q = read_file(f, "query");
    try {
      (void)mln::lang::parse_queries(all, q);
    } catch (const mln::lang::LangError& e) {
      throw std::runtime_error(f + ": " + e.where_what());
    }
    query_text += q + "\n";
  }
  for (const auto& p : o.closed_world)
    if (all.find_pred(p) < 0) throw std::runtime_error("-cw: unknown predicate " + p);
  if (!o.learn_rules.empty() && all.find_pred(o.learn_rules) < 0)
    throw std::runtime_error("-learnrules: unknown predicate " + o.learn_rules);
  if (!o.query_atoms.empty()) query_text += o.query_atoms + "\n";
  return program_text;
}

// Grounds the program (-learnwt: grounds for learning and queues the job,
// whose id it returns) and prints Tuffy's counts.
long long ground(mln::worker::Conn& c, const mln::cli::Options& o, const std::string& prog, const std::string& task) {
  say(">>> Grounding...");
  std::string cw = "{";
  for (size_t i = 0; i < o.closed_world.size(); ++i) cw += (i ? "," : "") + std::string("\"") + o.closed_world[i] + "\"";
  cw += "}";
  // Progress: mln.ground sends "grounding: <phase> <n>%" NOTICEs at most once
  // a second; a bar on a terminal, plain lines with -verbose otherwise.
  mln::cli::ProgressBar bar("grounding");
  c.on_notice([&](const std::string& m) {
    const size_t at = m.find("grounding: ");
    if (at == std::string::npos) return;
    if (!bar.tty()) {
      if (o.verbose > 0) say("    " + m.substr(at));
      return;
    }
    const std::string what = m.substr(at + 11);  // "<phase> <n>%"
    const size_t sp = what.rfind(' ');
    bar.update(sp == std::string::npos ? 0 : std::atoi(what.c_str() + sp + 1),
               sp == std::string::npos ? what : what.substr(0, sp));
  });
  long long job = 0;
  // Atoms, clauses before unit propagation, the statistics, then what unit propagation did.
  const std::string cols =
      "(s->>'atoms')::bigint, coalesce((s->'unit_propagation'->>'clauses_before')::bigint, (s->>'clauses')::bigint), "
      "s::text, coalesce(s->'unit_propagation'->>'hard_conflict', 'false'), "
      "coalesce(s->'unit_propagation'->>'atoms_fixed', '0'), s->'unit_propagation'->>'clauses_removed', "
      "s->'unit_propagation'->>'clauses_shortened', s->>'clauses'";
  mln::worker::Result g = [&] {
    struct Off {  // the handler refers to this frame: clear it on every exit
      mln::worker::Conn& c;
      ~Off() { c.on_notice(nullptr); }
    } off{c};
    if (task == "learn") {
      if (!o.closed_world.empty() || o.activate_all)
        throw std::runtime_error("-learnwt grounds with every unknown atom active; -cw and -activateAll do not apply");
      try {
        job = c.exec("SELECT mln.learn_weights($1, $2::jsonb, $3)", {prog, mln::cli::job_options_json(o), o.device})
                  .num(0, 0);
      } catch (const mln::worker::DbError& e) {
        // The server's hint names its SQL functions; -e is how evidence comes here.
        const std::string what = e.what();
        if (what.size() >= 20 && what.compare(what.size() - 20, 20, "has no training data") == 0)
          throw e.with_hint(
              "-learnwt learns from the evidence (-e) of the query predicates: it must hold some true query atoms");
        throw;
      }
      return c.exec("SELECT " + cols + " FROM (SELECT ground_stats s FROM mln.programs WHERE name = $1) q", {prog});
    }
    return c.exec("SELECT " + cols + " FROM mln.ground($1, $2, $3::boolean, $4::text[]) s",
                 {prog, o.device, o.activate_all ? "true" : "false", cw});
  }();
  bar.clear();
  // Tuffy's counts are before unit propagation (docs/grounding.md); what it did follows.
  say("### atoms = " + g.get(0, 0) + "; clauses = " + g.get(0, 1));
  if (g.get(0, 3) == "true") say("### unit propagation: the hard clauses conflict; the network is left as grounded");
  else if (!g.get(0, 4).empty() && g.get(0, 4) != "0")
    say("### unit propagation: " + g.get(0, 4) + " atoms fixed, " + g.get(0, 5) + " clauses removed, " +
        g.get(0, 6) + " shortened; clauses = " + g.get(0, 7));
  if (o.verbose > 0) {
    say("    grounding statistics: " + g.get(0, 2));
    try {  // peak memory of the backend that grounded (needs pg_read_server_files)
      mln::worker::Result m = c.exec("SELECT substring(pg_read_file('/proc/self/status') from 'VmHWM:\\s*(\\d+)')");
      say("    grounding backend peak RSS: " + m.get(0, 0) + " kB");
    } catch (const std::exception&) {
    }
  }
  return job;
}

// Writes the answer in Tuffy's files (output_files: -dual writes out.map and
// out.marginal).
void write_answer(mln::worker::Conn& c, const mln::cli::Options& o, const std::string& task, const std::string& prog,
                  long long job) {
  const std::vector<std::string> paths = mln::cli::output_files(o);
  if (task == "learn") {
    say(">>> Writing learned weights to file: " + paths[0]);
    mln::cli::write_learned_weights(c, prog, job, paths[0], o.gz);
    return;
  }
  if (task == "map" || task == "dual") {
    say(">>> Writing answer to file: " + paths[0]);
    mln::cli::write_map_output(c, prog, paths[0], o.gz);
  }
  if (task == "marginal" || task == "dual") {
    const std::string& path = paths.back();
    say(">>> Writing answer to file: " + path);
    mln::cli::write_marginal_output(c, prog, path, o.gz, o.min_prob, o.prolog_facts);
  }
}

void print_phases(const std::vector<Phase>& phases, Clock::time_point t_start) {
  double total = std::chrono::duration<double>(Clock::now() - t_start).count();
  std::printf("%-10s %10s\n", "phase", "seconds");
  for (const auto& p : phases) std::printf("%-10s %10.3f\n", p.name.c_str(), p.seconds);
  std::printf("%-10s %10.3f\n", "total", total);
}

int run(const mln::cli::Options& o) {
  auto t_start = Clock::now();
  std::vector<Phase> phases;
  auto lap = [&](const std::string& name, Clock::time_point& since) {
    auto now = Clock::now();
    phases.push_back({name, std::chrono::duration<double>(now - since).count()});
    since = now;
  };
  auto t = Clock::now();

  // Wrong paths fail here, before a server is started or anything loaded.
  mln::cli::check_paths(o);
  std::string query_text;
  const std::string program_text = parse_locally(o, query_text);
  lap("parse", t);

  mln::cli::Database db = mln::cli::open_database(o);
  say(">>> Connecting to RDBMS" + std::string(db.embedded ? " (private cluster)" : ""));
  mln::worker::Conn c(db.dsn);
  mln::cli::create_extension(c, false);
  if (o.device == "cpu" || o.device == "gpu") c.exec("SELECT set_config('mln.device', $1, false)", {o.device});
  // CUDA's context creation in the backend (~0.4 s) overlaps the evidence COPY.
  if (o.device == "gpu" || o.device == "auto") c.exec("SELECT mln.device_warmup()");
  lap("start", t);

  // Ctrl-C cancels whatever the server is doing.
  const mln::cli::CancelOnInterrupt cancel(c, g_interrupted);

  const std::string prog = program_name();
  c.exec("SELECT mln.drop_program($1) FROM mln.programs WHERE name = $1", {prog});
  c.exec("SELECT mln.create_program($1, $2)", {prog, program_text});
  bool keep = o.keep_data;
  struct Dropper {
    mln::worker::Conn& c; std::string name; bool& keep;
    ~Dropper() {
      if (keep) return;
      // An error may have left a transaction open (no ROLLBACK otherwise:
      // the server would log "there is no transaction in progress").
      if (PQtransactionStatus(c.raw()) != PQTRANS_IDLE) {
        try { c.exec("ROLLBACK"); } catch (...) {}
      }
      try { c.exec("SELECT mln.drop_program($1) FROM mln.programs WHERE name = $1", {name}); } catch (...) {}
    }
  } dropper{c, prog, keep};

  long long natoms_ev = 0;
  for (const auto& f : o.evidence_files) {
    say(">>> Parsing evidence file: " + f);
    try {
      natoms_ev += load_evidence_file(c, prog, f);
    } catch (const mln::worker::DbError& e) {
      throw e.with_message(f + ": " + e.what());
    }
  }
  say(">>> Storing evidence... (" + std::to_string(natoms_ev) + " atoms)");
  if (!o.learn_rules.empty()) {  // no grounding: the rules come from the evidence (docs/rules.md)
    lap("load", t);
    const std::string path = mln::cli::output_files(o)[0];
    say(">>> Learning rules for " + o.learn_rules);
    const int n = mln::cli::write_learned_rules(c, prog, o.learn_rules, o.rule_options, path);
    say(">>> Wrote " + std::to_string(n) + " rule(s) to file: " + path);
    lap("learn", t);
    print_phases(phases, t_start);
    return 0;
  }
  c.exec("SELECT mln.set_query($1, $2)", {prog, query_text});
  lap("load", t);

  const std::string task = mln::cli::inference_task(o);
  long long job = ground(c, o, prog, task);
  lap("ground", t);

  // Inference: one job (-dual: MAP and then MC-SAT on the network read once).
  if (task == "map") say(">>> Running MAP inference");
  else if (task == "marginal") say(">>> Running marginal inference (MC-SAT)");
  else if (task == "learn") say(">>> Learning weights (diagonal Newton, MC-SAT counts; at most " +
                                mln::cli::job_option(o, "iterations") + " iterations)");
  else say(">>> Running MAP inference, then marginal inference (MC-SAT)");
  if (task == "marginal" || task == "dual") say(">>> MCSAT FOR SAMPLES 0 ~ " + mln::cli::job_option(o, "samples"));
  if (task != "learn")
    job = c.exec("SELECT mln.infer($1, $2, $3::jsonb)", {prog, task, mln::cli::job_options_json(o)}).num(0, 0);
  const mln::cli::JobState s = mln::cli::follow_job(c, o, task, job, db.dsn, db.embedded, g_interrupted);
  mln::cli::report_job(c, o, task, job, s);
  lap(task == "learn" ? "learn" : "search", t);
  write_answer(c, o, task, prog, job);
  lap("output", t);

  say(">>> Cleaning up temporary data");
  if (o.keep_data) say("    Data remains in schema 'mln_" + prog + "'");
  else say("    Removing database schema 'mln_" + prog + "'...OK");
  print_phases(phases, t_start);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  mln::cli::Options o;
  try {
    o = mln::cli::parse_options(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "ERROR: " << e.what() << "\n" << mln::cli::usage();
    return 2;
  }
  for (const std::string& n : o.notes) std::printf("### Note: %s\n", n.c_str());
  if (o.help) { std::cout << mln::cli::usage(); return 0; }
  if (o.version) { std::cout << "pg_mln " MLN_VERSION_STRING "\n"; return 0; }
  if (o.stop_server) {
    try {
      std::cout << mln::cli::stop_private_server() << std::endl;
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "ERROR: " << e.what() << std::endl;
      return 2;
    }
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  if (!o.problog.empty() && o.output.empty()) mln::cli::say_on_stderr(true);  // the answer goes to stdout
  say("*** Welcome to pg_mln " MLN_VERSION_STRING " (Tuffy-compatible)");
  try {
    return o.problog.empty() ? run(o) : mln::cli::run_problog(o, g_interrupted);
  } catch (const mln::worker::DbError& e) {
    std::cerr << "ERROR: " << user_terms(e.what(), o) << "\n";
    if (!e.detail().empty()) std::cerr << "DETAIL: " << user_terms(e.detail(), o) << "\n";
    if (!e.hint().empty()) std::cerr << "HINT: " << user_terms(e.hint(), o) << "\n";
    std::cerr << std::flush;
    return g_interrupted ? 130 : 2;
  } catch (const std::exception& e) {
    std::cerr << "ERROR: " << user_terms(e.what(), o) << std::endl;
    return g_interrupted ? 130 : 2;
  }
}
