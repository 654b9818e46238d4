// mln_worker: serves pg_mln inference jobs of one database.
//
//   mln_worker [--dsn CONNINFO] [--once] [--job ID] [--threads N] [--lease SECONDS] [--quiet]
//
// With no --dsn the usual PG* environment variables apply.  Runs until
// SIGINT/SIGTERM (or, with --once, until the queue is empty).  Several
// workers may serve one database; a worker that dies loses no job (its
// lease runs out and another worker re-runs the job).
#include <csignal>
#include <cstring>
#include <iostream>
#include <string>

#include "worker/pq.hpp"
#include "worker/worker.hpp"

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

void usage() {
  std::cerr << "usage: mln_worker [--dsn CONNINFO] [--once] [--job ID] [--threads N] [--lease SECONDS] [--quiet]\n";
}
}  // namespace

int main(int argc, char** argv) {
  mln::worker::WorkerOptions o;
  bool quiet = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto need = [&](const char* what) -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "mln_worker: " << a << " needs " << what << "\n";
        exit(2);
      }
      return argv[++i];
    };
    try {
      if (a == "--dsn") o.dsn = need("a connection string");
      else if (a == "--once") o.once = true;
      else if (a == "--job") o.only_job = std::stoll(need("a job id"));
      else if (a == "--threads") o.threads = std::stoi(need("a number"));
      else if (a == "--lease") o.lease_seconds = std::stoi(need("seconds"));
      else if (a == "--quiet") quiet = true;
      else if (a == "--help" || a == "-h") { usage(); return 0; }
      else { std::cerr << "mln_worker: unknown option " << a << "\n"; usage(); return 2; }
    } catch (const std::exception&) {
      std::cerr << "mln_worker: bad value for " << a << "\n";
      return 2;
    }
  }
  if (!quiet) o.log = [](const std::string& s) { std::cerr << "mln_worker: " << s << std::endl; };
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    int n = mln::worker::serve(o, g_stop);
    if (!quiet) std::cerr << "mln_worker: finished " << n << " job(s)\n";
  } catch (const std::exception& e) {
    std::cerr << "mln_worker: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
