// pg_mln -problog FILE (problog_mode.hpp).
#include "cli/problog_mode.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "cli/database.hpp"
#include "cli/job_follow.hpp"
#include "cli/paths.hpp"
#include "cli/server.hpp"
#include "lang/problog.hpp"
#include "worker/pq.hpp"

namespace mln::cli {
namespace {

// The program's text; the file was checked readable (check_paths), so a
// failure here is a race or a read error, reported with the system's reason.
std::string read_program(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  if (f) s << f.rdbuf();
  if (!f || f.bad()) throw std::runtime_error("-problog " + path + ": cannot read the program file: " + std::strerror(errno));
  return s.str();
}

// A server error in the program's terms: its line and column (mln.problog's
// messages for the program start "line N, column M:") prefixed with the file.
mln::worker::DbError in_file(const mln::worker::DbError& e, const std::string& path) {
  const std::string what = e.what();
  return what.rfind("line ", 0) == 0 ? e.with_message(path + ": " + what) : e;
}

// One answer line: the probability and interval to 6 decimals (the 95%
// interval is never narrower than about 10^-4 at the default delta, so
// nothing the estimate says is lost), the samples as the server counts them.
std::string answer_line(const mln::worker::Result& r, int i) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "\t%.6f\t%.6f\t%.6f\t", r.dbl(i, 1), r.dbl(i, 2), r.dbl(i, 3));
  return r.get(i, 0) + buf + r.get(i, 4) + "\n";
}

}  // namespace

int run_problog(const Options& o, const std::atomic<bool>& interrupted) {
  const auto t0 = std::chrono::steady_clock::now();
  check_paths(o);  // wrong paths fail here, before a server is started
  say(">>> Parsing ProbLog program: " + o.problog);
  const std::string text = read_program(o.problog);
  try {
    (void)lang::problog::parse(text);  // syntax, arities, safety, strata: no table needed
  } catch (const lang::LangError& e) {
    throw std::runtime_error(o.problog + ": " + e.where_what());
  }

  Database db = open_database(o);
  say(">>> Connecting to RDBMS" + std::string(db.embedded ? " (private cluster)" : ""));
  mln::worker::Conn c(db.dsn);
  create_extension(c, false);
  // mln.problog's device defaults to the mln.device setting.
  if (o.device != "auto") c.exec("SELECT set_config('mln.device', $1, false)", {o.device});
  // The server's warnings (the stopping rule not reached) always; its
  // progress NOTICEs with -verbose (mln.problog's "verbose" option).
  c.on_notice([&](const std::string& m) {
    if (m.rfind("WARNING", 0) == 0) std::cerr << m << std::endl;
    else if (o.verbose > 0) say("    " + m);
  });
  const CancelOnInterrupt cancel(c, interrupted);

  say(">>> Sampling (mln.problog)");
  const mln::worker::Result r = [&] {
    try {
      return c.exec("SELECT query, probability, ci_low, ci_high, samples FROM mln.problog($1, "
                    "CASE WHEN $3 THEN jsonb_build_object('verbose', true) ELSE '{}' END || $2::jsonb)",
                    {text, o.problog_options.empty() ? "{}" : o.problog_options, o.verbose > 0 ? "true" : "false"});
    } catch (const mln::worker::DbError& e) {
      throw in_file(e, o.problog);
    }
  }();
  std::string out;
  for (int i = 0; i < r.rows(); ++i) out += answer_line(r, i);
  if (o.output.empty()) {
    std::cout << out << std::flush;
  } else {
    say(">>> Writing answer to file: " + o.output);
    std::ofstream f(o.output, std::ios::trunc);
    if (f) f << out;
    if (!f) throw std::runtime_error("-o " + o.output + ": cannot write the output file: " + std::strerror(errno));
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char buf[96];
  std::snprintf(buf, sizeof buf, " in %.3f s", s);
  say(">>> " + std::to_string(r.rows()) + " query atom(s), " + (r.rows() ? r.get(0, 4) : "0") + " samples each" + buf);
  return 0;
}

}  // namespace mln::cli
