// pg_mln: Tuffy-compatible command line over the pg_mln extension.
//
//   pg_mln -i prog.mln -e evidence.db -queryFile query.db -r out.txt
//
// Loads the program and evidence into PostgreSQL (a private cluster when no
// database is named), grounds inside the database, runs the worker for MAP
// inference (-marginal: MC-SAT marginals; -dual: both), and writes Tuffy's
// output format.
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "cli/embedded.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "cli/output.hpp"
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

// The connection string from -conf (Tuffy's tuffy.conf keys).
std::string dsn_from_conf(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open config file " + path);
  std::string line, url, user, pass;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    auto trim = [](std::string s) {
      size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    std::string k = trim(line.substr(0, eq)), v = trim(line.substr(eq + 1));
    if (k == "db_url") url = v;
    else if (k == "db_username") user = v;
    else if (k == "db_password") pass = v;
  }
  const std::string pre = "jdbc:postgresql://";
  if (url.rfind(pre, 0) != 0) throw std::runtime_error("config file " + path + ": db_url must be jdbc:postgresql://host[:port]/db");
  std::string rest = url.substr(pre.size());
  size_t slash = rest.find('/');
  std::string hostport = rest.substr(0, slash), db = slash == std::string::npos ? "postgres" : rest.substr(slash + 1);
  size_t colon = hostport.find(':');
  std::string dsn = "host=" + hostport.substr(0, colon) + " dbname=" + db;
  if (colon != std::string::npos) dsn += " port=" + hostport.substr(colon + 1);
  if (!user.empty()) dsn += " user=" + user;
  if (!pass.empty()) dsn += " password=" + pass;
  return dsn;
}

bool env_names_database() {
  for (const char* v : {"PGHOST", "PGDATABASE", "PGSERVICE", "PGPORT"})
    if (std::getenv(v) && *std::getenv(v)) return true;
  return false;
}

// Prints a line to stdout (Tuffy's console).
void say(const std::string& s) { std::cout << s << std::endl; }

struct Phase {
  std::string name;
  double seconds;
};

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

int run(const mln::cli::Options& o) {
  auto t_start = Clock::now();
  std::vector<Phase> phases;
  auto lap = [&](const std::string& name, Clock::time_point& since) {
    auto now = Clock::now();
    phases.push_back({name, std::chrono::duration<double>(now - since).count()});
    since = now;
  };
  auto t = Clock::now();

  // Parse locally first: errors then name the file, line and column.
  std::string program_text;
  {
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
    std::string qtext;
    for (const auto& f : o.query_files) {
      say(">>> Parsing query file: " + f);
      std::string q = read_file(f, "query");
      try {
        (void)mln::lang::parse_queries(all, q);
      } catch (const mln::lang::LangError& e) {
        throw std::runtime_error(f + ": " + e.where_what());
      }
    }
    for (const auto& p : o.closed_world)
      if (all.find_pred(p) < 0) throw std::runtime_error("-cw: unknown predicate " + p);
  }
  std::string query;
  for (const auto& f : o.query_files) query += read_file(f, "query") + "\n";
  if (!o.query_atoms.empty()) query += o.query_atoms + "\n";
  for (const auto& f : o.evidence_files)
    if (access(f.c_str(), R_OK) != 0) throw std::runtime_error("cannot open evidence file " + f);
  lap("parse", t);

  // The database: named; else a throwaway cluster in --workdir; else the
  // kept private server (started only when none is running).
  std::unique_ptr<mln::cli::EmbeddedCluster> cluster;
  std::string dsn = o.dsn;
  if (dsn.empty() && !o.conf.empty()) dsn = dsn_from_conf(o.conf);
  bool embedded = dsn.empty() && !env_names_database();
  if (embedded && !o.work_dir.empty()) {
    cluster = std::make_unique<mln::cli::EmbeddedCluster>(o.work_dir, o.verbose > 0);
    dsn = cluster->dsn();
    say(">>> Started private PostgreSQL cluster in " + cluster->dir());
  } else if (embedded) {
    mln::cli::PrivateServer ps = mln::cli::find_or_start_private_server(o.verbose > 0);
    dsn = ps.dsn;
    say(">>> Using the " + ps.description);
  }
  say(">>> Connecting to RDBMS" + std::string(embedded ? " (private cluster)" : ""));
  mln::worker::Conn c(dsn);
  c.exec("CREATE EXTENSION IF NOT EXISTS pg_mln");
  if (o.device == "cpu" || o.device == "gpu") c.exec("SELECT set_config('mln.device', $1, false)", {o.device});
  // CUDA's context creation in the backend (~0.4 s) overlaps the evidence COPY.
  if (o.device == "gpu" || o.device == "auto") c.exec("SELECT mln.device_warmup()");
  lap("start", t);

  // Watch for Ctrl-C: cancel whatever the server is doing.
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done) {
      if (g_interrupted) {
        PGcancel* cn = PQgetCancel(c.raw());
        char err[256];
        if (cn) { PQcancel(cn, err, sizeof err); PQfreeCancel(cn); }
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  struct Joiner {
    std::atomic<bool>& d; std::thread& th;
    ~Joiner() { d = true; if (th.joinable()) th.join(); }
  } joiner{done, watcher};

  std::string prog = "tuffy_" + std::to_string(getpid());
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
      throw std::runtime_error(f + ": " + e.what());
    }
  }
  say(">>> Storing evidence... (" + std::to_string(natoms_ev) + " atoms)");
  c.exec("SELECT mln.set_query($1, $2)", {prog, query});
  lap("load", t);

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
  // -learnwt: mln.learn_weights grounds for learning and queues the job.
  const std::string task = mln::cli::inference_task(o);
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
      job = c.exec("SELECT mln.learn_weights($1, $2::jsonb, $3)", {prog, mln::cli::job_options_json(o), o.device})
                .num(0, 0);
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
  lap("ground", t);

  // Inference: queue the job and serve it with an in-process worker unless
  // an external worker is already serving this database.  -dual is one job:
  // MAP and then MC-SAT on the network read once.
  if (task == "map") say(">>> Running MAP inference");
  else if (task == "marginal") say(">>> Running marginal inference (MC-SAT)");
  else if (task == "learn") say(">>> Learning weights (diagonal Newton, MC-SAT counts; at most " +
                                std::to_string(o.learn_iterations) + " iterations)");
  else say(">>> Running MAP inference, then marginal inference (MC-SAT)");
  if (task == "marginal" || task == "dual") say(">>> MCSAT FOR SAMPLES 0 ~ " + std::to_string(o.mcsat_samples));
  if (task != "learn")
    job = c.exec("SELECT mln.infer($1, $2, $3::jsonb)", {prog, task, mln::cli::job_options_json(o)}).num(0, 0);
  mln::worker::Result ext = c.exec(
      "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mln_worker' AND datname = current_database()");
  bool own_worker = embedded || ext.num(0, 0) == 0;
  std::atomic<bool> stop_worker{false};
  std::string worker_error;
  std::thread worker;
  if (own_worker) {
    worker = std::thread([&] {
      try {
        mln::worker::WorkerOptions wo;
        wo.dsn = dsn;
        wo.only_job = job;
        wo.threads = o.threads;
        if (o.verbose > 1) wo.log = [](const std::string& s) { std::cerr << "worker: " << s << std::endl; };
        mln::worker::serve(wo, stop_worker);
      } catch (const std::exception& e) {
        worker_error = e.what();
      }
    });
  }
  struct WorkerJoin {
    std::atomic<bool>& stop; std::thread& th;
    ~WorkerJoin() { stop = true; if (th.joinable()) th.join(); }
  } wj{stop_worker, worker};
  bool tty = isatty(STDOUT_FILENO);
  auto t_search = Clock::now();
  // Cost over time, for the benchmark report (MLN_TRACE_FILE).
  std::unique_ptr<std::ofstream> trace;
  if (const char* tf = std::getenv("MLN_TRACE_FILE")) trace = std::make_unique<std::ofstream>(tf, std::ios::app);
  // On a terminal, after 2 s: MAP shows its best cost so far on one line,
  // MC-SAT a bar of the samples drawn (per component) of those asked for.
  mln::cli::ProgressBar sample_bar("sampling");
  bool map_line = false;
  std::string status, best, hard, flips, err, gpu_mem, samples, samples_total, avg_cost, iterations, objective, device_used;
  std::string bound, gap, optimal, solver_used;
  while (true) {
    if (g_interrupted) throw std::runtime_error("interrupted");
    mln::worker::Result r = c.exec(
        "SELECT s->>'status', s->>'best_cost', s->>'hard_violated', s->>'flips', s->>'error', "
        "  s->>'gpu_memory_bytes', s->>'samples', s->>'samples_total', s->>'average_cost', s->>'progress', "
        "  s->>'iterations', s->>'objective', s->>'device', s->>'bound', s->>'gap', s->>'optimal', s->>'solver' "
        "FROM mln.wait($1, interval '0.2 s') s",
        {std::to_string(job)});
    status = r.get(0, 0);
    best = r.get(0, 1);
    hard = r.get(0, 2);
    flips = r.get(0, 3);
    err = r.get(0, 4);
    gpu_mem = r.get(0, 5);
    samples = r.get(0, 6);
    samples_total = r.get(0, 7);
    avg_cost = r.get(0, 8);
    iterations = r.get(0, 10);
    objective = r.get(0, 11);
    device_used = r.get(0, 12);
    bound = r.get(0, 13);
    gap = r.get(0, 14);
    optimal = r.get(0, 15);
    solver_used = r.get(0, 16);
    double el = std::chrono::duration<double>(Clock::now() - t_search).count();
    if (trace && !best.empty()) *trace << el << " " << best << " " << flips << "\n";
    if (status == "done" || status == "failed" || status == "cancelled") break;
    if (task == "learn") {
      if (tty && el > 2 && !iterations.empty())
        sample_bar.update(static_cast<int>(100 * r.dbl(0, 9)),
                          iterations + "/" + std::to_string(o.learn_iterations) + " iterations, objective " +
                              (objective.empty() ? "-" : objective.substr(0, 10)));
    } else if (tty && el > 2 && task != "map" && !samples.empty()) {
      if (map_line) {  // a dual job's MAP phase is over: its line gives way to the bar
        std::printf("\n");
        map_line = false;
      }
      sample_bar.update(static_cast<int>(100 * r.dbl(0, 9)), samples + "/" + samples_total + " samples");
    } else if (tty && el > 2 && task != "marginal" && samples.empty()) {
      std::printf("\r    searching... %.0f s, best cost %s, %s flips   ", el, best.empty() ? "-" : best.c_str(),
                  flips.empty() ? "0" : flips.c_str());
      std::fflush(stdout);
      map_line = true;
    }
    if (own_worker && !worker_error.empty()) throw std::runtime_error("worker: " + worker_error);
  }
  sample_bar.clear();
  if (map_line) std::printf("\n");
  if (status != "done")
    throw std::runtime_error(std::string(task == "learn" ? "learning " : "inference ") + status +
                             (err.empty() ? "" : ": " + err));
  char buf[64];
  if (task == "learn") {
    say("### " + iterations + " learning iterations (sampling on " + (device_used.empty() ? "cpu" : device_used) +
        "); estimated gain in log-likelihood " + objective);
    lap("learn", t);
    say(">>> Writing learned weights to file: " + o.output);
    mln::cli::write_learned_weights(c, prog, job, o.output, o.gz);
    lap("output", t);
  } else if (task != "marginal") {
    std::snprintf(buf, sizeof buf, "%.2f", std::stod(best));
    say("### Best answer has cost " + std::string(buf));
    if (hard != "0") say("### " + hard + " hard clause(s) violated");
    // The answer's quality: a lower bound on the optimum and the gap to it.
    if (!bound.empty()) {
      if (optimal == "true") {
        say("### Proven optimal (" + solver_used + ")");
      } else {
        char g[128];
        std::snprintf(g, sizeof g, "### Lower bound %.2f, gap %.2f%% (%s)", std::stod(bound),
                      100 * (gap.empty() ? 0.0 : std::stod(gap)), solver_used.c_str());
        say(g);
      }
    }
  }
  // The job's warnings (a GPU that fell back to the CPU, a time limit that
  // ended the search or the sampling early).
  {
    mln::worker::Result w = c.exec("SELECT unnest(warnings) FROM mln.jobs WHERE id = $1", {std::to_string(job)});
    for (int i = 0; i < w.rows(); ++i) say("### Warning: " + w.get(i, 0));
  }
  if (task == "marginal" || task == "dual") {
    std::snprintf(buf, sizeof buf, "%.2f", avg_cost.empty() ? 0.0 : std::stod(avg_cost));
    say("### Average Cost " + std::string(buf));
    if (o.verbose > 0) say("    " + samples + " samples per component");
  }
  if (o.verbose > 0 && !gpu_mem.empty() && gpu_mem != "0")
    say("    search GPU memory peak: " + std::to_string(std::stoll(gpu_mem) / 1024) + " kB");
  if (task != "learn") lap("search", t);

  // Tuffy's file names: -dual writes out.map and out.marginal.
  if (task == "map" || task == "dual") {
    const std::string path = task == "dual" ? o.output + ".map" : o.output;
    say(">>> Writing answer to file: " + path);
    mln::cli::write_map_output(c, prog, path, o.gz);
  }
  if (task == "marginal" || task == "dual") {
    const std::string path = task == "dual" ? o.output + ".marginal" : o.output;
    say(">>> Writing answer to file: " + path);
    mln::cli::write_marginal_output(c, prog, path, o.gz, o.min_prob, o.prolog_facts);
  }
  if (task != "learn") lap("output", t);

  say(">>> Cleaning up temporary data");
  if (o.keep_data) say("    Data remains in schema 'mln_" + prog + "'");
  else say("    Removing database schema 'mln_" + prog + "'...OK");
  double total = std::chrono::duration<double>(Clock::now() - t_start).count();
  std::printf("%-10s %10s\n", "phase", "seconds");
  for (const auto& p : phases) std::printf("%-10s %10.3f\n", p.name.c_str(), p.seconds);
  std::printf("%-10s %10.3f\n", "total", total);
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
  say("*** Welcome to pg_mln " MLN_VERSION_STRING " (Tuffy-compatible)");
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "ERROR: " << e.what() << std::endl;
    return g_interrupted ? 130 : 2;
  }
}
