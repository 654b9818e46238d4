// Private PostgreSQL cluster for a single pg_mln run.
#include "cli/embedded.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace mln::cli {

std::string shq(const std::string& s) {
  std::string o = "'";
  for (char c : s) {
    if (c == '\'') o += "'\\''";
    else o += c;
  }
  return o + "'";
}

int run_shell(const std::string& cmd, bool as_postgres) {
  std::string full = as_postgres ? "su postgres -s /bin/sh -c " + shq(cmd) : cmd;
  int st = std::system(full.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

namespace {

// The PostgreSQL 15 server binaries.
std::string find_bindir() {
  const char* env = std::getenv("MLN_PG_BINDIR");
  if (env && *env) return env;
  FILE* p = popen("pg_config --bindir 2>/dev/null", "r");
  if (p) {
    char buf[4096] = {0};
    if (fgets(buf, sizeof buf, p)) {
      std::string s(buf);
      while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
      pclose(p);
      if (access((s + "/initdb").c_str(), X_OK) == 0) return s;
    } else {
      pclose(p);
    }
  }
  if (access("/usr/lib/postgresql/15/bin/initdb", X_OK) == 0) return "/usr/lib/postgresql/15/bin";
  throw std::runtime_error("PostgreSQL 15 server binaries (initdb, pg_ctl) not found; install postgresql-15 "
                           "or set MLN_PG_BINDIR");
}

std::string tail_file(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  std::string l;
  while (std::getline(f, l)) lines.push_back(l);
  std::string out;
  for (size_t i = lines.size() > 15 ? lines.size() - 15 : 0; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

// Where the pristine data directory is cached ("" = no caching).
std::string template_dir(const std::string& bindir) {
  const char* off = std::getenv("MLN_NO_TEMPLATE");
  if (off && *off && std::string(off) != "0") return "";
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::string base = xdg && *xdg ? std::string(xdg) : home && *home ? std::string(home) + "/.cache" : "";
  if (base.empty()) return "";
  std::string version = std::to_string(std::hash<std::string>{}(bindir) % 1000000007);
  return base + "/pg_mln/pgdata-template-" + version;
}

// Copies a freshly initialised data directory to the cache, atomically.
void save_template(const std::string& data, const std::string& tmpl) {
  if (tmpl.empty()) return;
  std::string parent = tmpl.substr(0, tmpl.rfind('/'));
  std::string staging = tmpl + ".tmp" + std::to_string(getpid());
  if (run_shell("mkdir -p " + shq(parent) + " && chmod 755 " + shq(parent) + " && cp -a " + shq(data) + " " +
                    shq(staging) + " && mv -T " + shq(staging) + " " + shq(tmpl) + " 2>/dev/null",
                false) != 0)
    run_shell("rm -rf " + shq(staging), false);
}

}  // namespace

EmbeddedCluster::EmbeddedCluster(const std::string& parent, bool verbose) {
  bindir_ = find_bindir();
  as_postgres_ = geteuid() == 0;  // PostgreSQL refuses to run as root
  std::string tmpl = (parent.empty() ? std::string("/tmp") : parent) + "/pg_mln-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("cannot create work directory under " + tmpl);
  dir_ = buf.data();
  try {
    if (as_postgres_) {
      struct passwd* pw = getpwnam("postgres");
      if (!pw) throw std::runtime_error("running as root needs the 'postgres' user to own the private cluster");
      if (chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) throw std::runtime_error("cannot chown " + dir_);
    }
    port_ = 40000 + static_cast<int>(getpid() % 20000);
    std::string data = dir_ + "/data";
    std::string log = dir_ + "/server.log";
    // initdb is most of the start-up time: the first run keeps a pristine copy
    // of the new data directory (per user and server version) and later runs
    // copy it instead (MLN_NO_TEMPLATE=1 turns this off).
    std::string tmpl_dir = template_dir(bindir_);
    bool have_template = !tmpl_dir.empty() && access((tmpl_dir + "/PG_VERSION").c_str(), R_OK) == 0;
    if (have_template) {
      if (run_shell("cp -a " + shq(tmpl_dir) + " " + shq(data), false) != 0) have_template = false;
    }
    if (!have_template) {
      if (run_shell(shq(bindir_ + "/initdb") + " -D " + shq(data) + " -U postgres -A trust -E UTF8 --locale=C.UTF-8 >" +
                        shq(dir_ + "/initdb.log") + " 2>&1",
                    as_postgres_) != 0)
        throw std::runtime_error("initdb failed:\n" + tail_file(dir_ + "/initdb.log"));
      save_template(data, tmpl_dir);
    }
    std::ostringstream opts;
    opts << "-c listen_addresses='' -c unix_socket_directories='" << dir_ << "' -p " << port_
         << " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=256MB";
    // OpenMP threads of the CPU backend sleep instead of spinning between operators.
    if (run_shell("OMP_WAIT_POLICY=passive " + shq(bindir_ + "/pg_ctl") + " -D " + shq(data) + " -l " + shq(log) + " -w -t 60 -o " +
                      shq(opts.str()) + " start >/dev/null",
                  as_postgres_) != 0)
      throw std::runtime_error("the private PostgreSQL server did not start:\n" + tail_file(log));
    started_ = true;
    (void)verbose;
  } catch (...) {
    shutdown();
    throw;
  }
}

EmbeddedCluster::~EmbeddedCluster() { shutdown(); }

std::string EmbeddedCluster::dsn() const {
  return "host=" + dir_ + " port=" + std::to_string(port_) + " user=postgres dbname=postgres";
}

void EmbeddedCluster::shutdown() {
  if (started_) {
    run_shell(shq(bindir_ + "/pg_ctl") + " -D " + shq(dir_ + "/data") + " -m immediate -w stop >/dev/null 2>&1",
              as_postgres_);
    started_ = false;
  }
  if (!dir_.empty()) {
    run_shell("rm -rf " + shq(dir_), false);
    dir_.clear();
  }
}

}  // namespace mln::cli
