// mln_worker: serves pg_mln inference jobs of one database.
//
//   mln_worker [--dsn CONNINFO] [--once] [--job ID] [--threads N] [--lease SECONDS]
//              [--gpu N | --gpus all] [--name NAME] [--quiet]
//
// --gpu N binds the worker to GPU N (CUDA_VISIBLE_DEVICES=N); --gpus all
// starts one worker process per GPU (each --gpu N) and waits for them.
// With no --dsn the usual PG* environment variables apply.  Runs until
// SIGINT/SIGTERM (or, with --once, until the queue is empty).  Several
// workers may serve one database; a worker that dies loses no job (its
// lease runs out and another worker re-runs the job).
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <iostream>
#include <string>

#include "core/walk/walksat_gpu.hpp"
#include "worker/pq.hpp"
#include "worker/worker.hpp"

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

// Whether the database has the extension yet, over `c` (opened when null);
// throws when it cannot be reached.
bool extension_installed(const std::string& dsn, std::unique_ptr<mln::worker::Conn>& c) {
  if (!c) c = std::make_unique<mln::worker::Conn>(dsn);
  return c->exec("SELECT 1 FROM pg_extension WHERE extname = 'pg_mln'").rows() == 1;
}

// Serves the database until SIGINT/SIGTERM.  A worker is started beside a
// database, often before CREATE EXTENSION: it waits for the extension.  A
// lost connection (a restarted server, a terminated backend) is not the
// end of a long-running worker: it connects again after kRetrySeconds, and
// the jobs it held come back to the queue when their leases run out.  A
// database it cannot reach at start is an error (a wrong --dsn), as is any
// error with --once or --job.
int serve_until_stopped(const mln::worker::WorkerOptions& o, const std::string& prefix, bool quiet) {
  constexpr int kRetrySeconds = 2;
  const bool one_shot = o.once || o.only_job;
  bool told = false;
  std::unique_ptr<mln::worker::Conn> first;  // the probe's connection, served over next
  try {
    while (!g_stop && !extension_installed(o.dsn, first)) {
      if (one_shot) throw std::runtime_error("the pg_mln extension is not installed in this database (CREATE EXTENSION pg_mln)");
      if (!told && !quiet) std::cerr << prefix << "waiting for CREATE EXTENSION pg_mln in this database\n";
      told = true;
      sleep(kRetrySeconds);
    }
  } catch (const std::exception& e) {
    std::cerr << prefix << e.what() << "\n";
    return 1;
  }
  int n = 0;
  while (!g_stop) {
    try {
      n += first ? mln::worker::serve(o, g_stop, std::move(first)) : mln::worker::serve(o, g_stop);
      break;
    } catch (const std::exception& e) {
      std::cerr << prefix << e.what() << "\n";
      if (one_shot) return 1;
      if (!quiet) std::cerr << prefix << "connecting again in " << kRetrySeconds << " s\n";
      for (int i = 0; i < kRetrySeconds * 10 && !g_stop; ++i) usleep(100000);
    }
  }
  if (!quiet) std::cerr << "mln_worker: finished " << n << " job(s)\n";
  return 0;
}

void usage() {
  std::cerr << "usage: mln_worker [--dsn CONNINFO] [--once] [--job ID] [--threads N] [--lease SECONDS]\n"
               "                  [--gpu N | --gpus all] [--name NAME] [--quiet]\n";
}

// The GPUs this process may use, without touching CUDA (a CUDA context
// must not cross fork): CUDA_VISIBLE_DEVICES when set, else the NVIDIA
// driver's device entries.
std::vector<std::string> visible_gpus() {
  std::vector<std::string> ids;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::string s = v, cur;
    for (char ch : s + ",")
      if (ch == ',') {
        if (!cur.empty()) ids.push_back(cur);
        cur.clear();
      } else if (ch != ' ') {
        cur += ch;
      }
    return ids;
  }
  int n = 0;
  if (DIR* d = opendir("/proc/driver/nvidia/gpus")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  for (int i = 0; i < n; ++i) ids.push_back(std::to_string(i));
  return ids;
}

// --gpus all: one child per GPU, each this program with --gpu N in place
// of --gpus all; signals are passed on; returns the worst exit status.
int run_per_gpu(int argc, char** argv) {
  const std::vector<std::string> gpus = visible_gpus();
  if (gpus.empty()) {
    std::cerr << "mln_worker: --gpus all: no GPU found (CUDA_VISIBLE_DEVICES, /proc/driver/nvidia/gpus)\n";
    return 2;
  }
  std::vector<pid_t> kids;
  for (size_t g = 0; g < gpus.size(); ++g) {
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("mln_worker: fork");
      break;
    }
    if (pid == 0) {
      setenv("CUDA_VISIBLE_DEVICES", gpus[g].c_str(), 1);
      std::vector<std::string> args;
      for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--gpus") == 0) {
          ++i;
          args.push_back("--gpu");
          args.push_back(std::to_string(g));
          args.push_back("--gpu-visible");  // CUDA_VISIBLE_DEVICES is set already
          continue;
        }
        args.push_back(argv[i]);
      }
      std::vector<char*> cargs;
      for (auto& a : args) cargs.push_back(a.data());
      cargs.push_back(nullptr);
      execv("/proc/self/exe", cargs.data());
      std::perror("mln_worker: exec");
      _exit(127);
    }
    kids.push_back(pid);
  }
  int worst = 0;
  for (size_t done = 0; done < kids.size();) {
    int st = 0;
    pid_t p = waitpid(-1, &st, 0);
    if (p < 0) {
      if (errno != EINTR) break;
      if (g_stop)
        for (pid_t k : kids) kill(k, SIGTERM);
      continue;
    }
    ++done;
    worst = std::max(worst, WIFEXITED(st) ? WEXITSTATUS(st) : 1);
  }
  return worst;
}
}  // namespace

int main(int argc, char** argv) {
  mln::worker::WorkerOptions o;
  bool quiet = false, all_gpus = false, visible_set = false;
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
      else if (a == "--name") o.name = need("a name");
      else if (a == "--gpu") o.gpu = std::stoi(need("a GPU number"));
      else if (a == "--gpu-visible") visible_set = true;
      else if (a == "--gpus") {
        if (need("all") != "all") throw std::invalid_argument("--gpus");
        all_gpus = true;
      }
      else if (a == "--help" || a == "-h") { usage(); return 0; }
      else { std::cerr << "mln_worker: unknown option " << a << "\n"; usage(); return 2; }
    } catch (const std::exception&) {
      std::cerr << "mln_worker: bad value for " << a << "\n";
      return 2;
    }
  }
  if (all_gpus && o.gpu >= 0) {
    std::cerr << "mln_worker: --gpu and --gpus all exclude each other\n";
    return 2;
  }
  if (all_gpus) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;  // no SA_RESTART: waitpid returns to pass the signal on
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    return run_per_gpu(argc, argv);
  }
  if (o.gpu >= 0 && !visible_set) {
    // Bound to one GPU before anything touches CUDA: it is device 0 here.
    const std::vector<std::string> gpus = visible_gpus();
    if (!gpus.empty() && static_cast<size_t>(o.gpu) >= gpus.size()) {
      std::cerr << "mln_worker: --gpu " << o.gpu << ": only " << gpus.size() << " GPU(s) visible\n";
      return 2;
    }
    setenv("CUDA_VISIBLE_DEVICES", gpus.empty() ? std::to_string(o.gpu).c_str() : gpus[o.gpu].c_str(), 1);
  }
  if (o.gpu >= 0 && o.name.empty()) {
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    o.name = std::string(host) + ":" + std::to_string(getpid()) + ":gpu" + std::to_string(o.gpu);
  }
  const std::string prefix = o.gpu >= 0 ? "mln_worker[gpu " + std::to_string(o.gpu) + "]: " : "mln_worker: ";
  if (!quiet) o.log = [prefix](const std::string& s) { std::cerr << prefix << s << std::endl; };
  if (o.gpu >= 0) {  // its GPU's context now, not in its first job's search
    std::string why;
    if (!mln::solver::gpu_warm_up(&why) && o.log) o.log("GPU " + std::to_string(o.gpu) + " not usable: " + why);
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  return serve_until_stopped(o, prefix, quiet);
}
