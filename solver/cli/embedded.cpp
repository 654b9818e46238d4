// Private PostgreSQL servers of the command line: the kept per-user server
// (the default), `make demo`'s cluster, and the throwaway cluster of --workdir.
#include "cli/embedded.hpp"

#include <fcntl.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "cli/server.hpp"
#include "worker/pq.hpp"

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

// The invoking user's cache directory ("" when there is no HOME).
std::string cache_base() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  return xdg && *xdg ? std::string(xdg) : home && *home ? std::string(home) + "/.cache" : "";
}

// Where the pristine data directory is cached ("" = no caching).
std::string template_dir(const std::string& bindir) {
  const char* off = std::getenv("MLN_NO_TEMPLATE");
  if (off && *off && std::string(off) != "0") return "";
  std::string base = cache_base();
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

// A new data directory at `data` (which must not exist): a copy of the
// cached template, or initdb (then cached for the next time).
void init_data_dir(const std::string& bindir, const std::string& data, const std::string& logdir, bool as_postgres) {
  std::string tmpl_dir = template_dir(bindir);
  if (!tmpl_dir.empty() && access((tmpl_dir + "/PG_VERSION").c_str(), R_OK) == 0 &&
      run_shell("cp -a " + shq(tmpl_dir) + " " + shq(data), false) == 0)
    return;
  run_shell("rm -rf " + shq(data), false);
  if (run_shell(shq(bindir + "/initdb") + " -D " + shq(data) + " -U postgres -A trust -E UTF8 --locale=C.UTF-8 >" +
                    shq(logdir + "/initdb.log") + " 2>&1",
                as_postgres) != 0)
    throw std::runtime_error("initdb failed:\n" + tail_file(logdir + "/initdb.log"));
  save_template(data, tmpl_dir);
}

// Server settings of the private servers: Unix socket only (no TCP), and
// durability traded for speed (the data are a run's scratch space).
std::string server_options(const std::string& sockdir, int port) {
  std::ostringstream opts;
  opts << "-c listen_addresses='' -c unix_socket_directories='" << sockdir << "' -p " << port
       << " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=256MB";
  return opts.str();
}

// Starts a server on `data`, logging to `log`; throws with the log's tail.
void start_server(const std::string& bindir, const std::string& data, const std::string& log, const std::string& opts,
                  bool as_postgres) {
  // OpenMP threads of the CPU backend sleep instead of spinning between operators.
  if (run_shell("OMP_WAIT_POLICY=passive " + shq(bindir + "/pg_ctl") + " -D " + shq(data) + " -l " + shq(log) +
                    " -w -t 60 -o " + shq(opts) + " start >/dev/null",
                as_postgres) != 0)
    throw std::runtime_error("the private PostgreSQL server did not start:\n" + tail_file(log));
}

// The kept server's socket "port" (it listens on no TCP port: this only
// names the socket file).
constexpr int kKeptPort = 55433;

// The kept server's directory: $MLN_SERVER_DIR, else ~/.cache/pg_mln/server
// of the invoking user; as root (the server then runs as 'postgres', which
// cannot enter root's home), under the postgres user's home.
std::string kept_server_dir(bool as_postgres) {
  const char* env = std::getenv("MLN_SERVER_DIR");
  if (env && *env) return env;
  if (as_postgres) {
    struct passwd* pw = getpwnam("postgres");
    if (!pw) throw std::runtime_error("running as root needs the 'postgres' user to own the private server");
    return std::string(pw->pw_dir) + "/.cache/pg_mln/server-" + std::to_string(geteuid());
  }
  std::string base = cache_base();
  if (base.empty()) throw std::runtime_error("no HOME: set MLN_SERVER_DIR, or name a database with --dsn");
  return base + "/pg_mln/server";
}

// Where `make demo`'s cluster leaves its connection string (scripts/cluster.sh).
std::string demo_registry() {
  std::string base = cache_base();
  return base.empty() ? "" : base + "/pg_mln/demo-cluster";
}

bool answers(const std::string& conninfo) { return PQping(conninfo.c_str()) == PQPING_OK; }

// An exclusive lock on `path` for the life of the object (serialises runs
// that start the kept server or create its database at the same time).
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600)) {
    if (fd_ < 0) throw std::runtime_error("cannot open lock file " + path);
    while (flock(fd_, LOCK_EX) != 0) {
    }
  }
  ~FileLock() { close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

// Database "pg_mln" in the server at `base` (conninfo without dbname), with
// the extension at the installed library's default version.
// The database holds nothing between runs (each run removes what it made),
// so one made by another build of the extension's SQL (same version, other
// scripts: a rebuilt development tree) is dropped and made again; if another
// run is using it, it stays and ALTER EXTENSION below does what it can.
void ensure_database(const std::string& base) {
  {
    mln::worker::Conn c(base + " dbname=postgres");
    c.exec("SET client_min_messages = warning");
    const std::string stamp = std::string("pg_mln kept server; extension scripts ") + MLN_SQL_FINGERPRINT;
    mln::worker::Result d =
        c.exec("SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = 'pg_mln'");
    bool create = d.rows() == 0;
    if (!create && d.get(0, 0) != stamp) {
      try {
        c.exec("DROP DATABASE pg_mln");
        create = true;
      } catch (const std::exception&) {
        // in use by another run: keep it
      }
    }
    if (create) {
      c.exec("CREATE DATABASE pg_mln");
      c.exec("COMMENT ON DATABASE pg_mln IS '" + stamp + "'");  // hex digits: no quoting needed
    }
  }
  mln::worker::Conn c(base + " dbname=pg_mln");
  c.exec("SET client_min_messages = warning");
  // A server kept from an earlier install: bring the extension up to date.
  create_extension(c, true);
}

}  // namespace

PrivateServer find_or_start_private_server(bool verbose) {
  (void)verbose;
  const bool as_postgres = geteuid() == 0;  // PostgreSQL refuses to run as root
  const std::string dir = kept_server_dir(as_postgres);
  const std::string kept = "host=" + dir + " port=" + std::to_string(kKeptPort) + " user=postgres";
  if (run_shell("mkdir -p " + shq(dir), false) != 0) throw std::runtime_error("cannot create " + dir);
  FileLock lock(dir + "/../server.lock");
  PrivateServer s;
  if (answers(kept + " dbname=postgres")) {
    s.dsn = kept;
    s.description = "kept server in " + dir;
  } else {
    // make demo's cluster, when it is up.
    std::string reg = demo_registry(), demo;
    if (!reg.empty()) {
      std::ifstream f(reg);
      std::getline(f, demo);
    }
    if (!demo.empty() && answers(demo + " dbname=postgres")) {
      s.dsn = demo;
      s.description = "make demo's cluster (" + demo + ")";
    } else {
      const std::string bindir = find_bindir();
      if (as_postgres) {
        struct passwd* pw = getpwnam("postgres");
        if (!pw || run_shell("chown postgres " + shq(dir) + " && chmod 700 " + shq(dir), false) != 0)
          throw std::runtime_error("cannot hand " + dir + " to the postgres user");
      }
      const std::string data = dir + "/data";
      if (access((data + "/PG_VERSION").c_str(), R_OK) != 0) init_data_dir(bindir, data, dir, as_postgres);
      start_server(bindir, data, dir + "/server.log", server_options(dir, kKeptPort), as_postgres);
      s.dsn = kept;
      s.description = "kept server in " + dir + " (started now; pg_mln --stop-server stops it)";
      s.started = true;
    }
  }
  ensure_database(s.dsn);
  s.dsn += " dbname=pg_mln";
  return s;
}

std::string stop_private_server() {
  const bool as_postgres = geteuid() == 0;
  const std::string dir = kept_server_dir(as_postgres);
  const std::string data = dir + "/data";
  if (access((data + "/PG_VERSION").c_str(), R_OK) != 0) return "no kept server in " + dir;
  const std::string bindir = find_bindir();
  if (run_shell(shq(bindir + "/pg_ctl") + " -D " + shq(data) + " status >/dev/null 2>&1", as_postgres) != 0)
    return "the kept server in " + dir + " is not running";
  if (run_shell(shq(bindir + "/pg_ctl") + " -D " + shq(data) + " -m fast -w stop >/dev/null 2>&1", as_postgres) != 0)
    throw std::runtime_error("could not stop the kept server in " + dir + " (see " + dir + "/server.log)");
  return "stopped the kept server in " + dir;
}

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
    // initdb is most of the start-up time: the first run keeps a pristine copy
    // of the new data directory (per user and server version) and later runs
    // copy it instead (MLN_NO_TEMPLATE=1 turns this off).
    init_data_dir(bindir_, data, dir_, as_postgres_);
    start_server(bindir_, data, dir_ + "/server.log", server_options(dir_, port_), as_postgres_);
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
