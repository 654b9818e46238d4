// The database a run works in, and Ctrl-C's cancel (database.hpp).
#include "cli/database.hpp"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "cli/job_follow.hpp"

namespace mln::cli {
namespace {

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
}  // namespace

Database open_database(const Options& o) {
  Database db;
  db.dsn = o.dsn;
  if (db.dsn.empty() && !o.conf.empty()) db.dsn = dsn_from_conf(o.conf);
  db.embedded = db.dsn.empty() && !env_names_database();
  if (db.embedded && !o.work_dir.empty()) {
    db.cluster = std::make_unique<EmbeddedCluster>(o.work_dir, o.verbose > 0);
    db.dsn = db.cluster->dsn();
    say(">>> Started private PostgreSQL cluster in " + db.cluster->dir());
  } else if (db.embedded) {
    PrivateServer ps = find_or_start_private_server(o.verbose > 0);
    db.dsn = ps.dsn;
    say(">>> Using the " + ps.description);
  }
  return db;
}

CancelOnInterrupt::CancelOnInterrupt(mln::worker::Conn& c, const std::atomic<bool>& interrupted)
    : watcher_([this, &c, &interrupted] {
        while (!done_) {
          if (interrupted) {
            PGcancel* cn = PQgetCancel(c.raw());
            char err[256];
            if (cn) {
              PQcancel(cn, err, sizeof err);
              PQfreeCancel(cn);
            }
            break;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      }) {}

CancelOnInterrupt::~CancelOnInterrupt() {
  done_ = true;
  if (watcher_.joinable()) watcher_.join();
}

}  // namespace mln::cli
