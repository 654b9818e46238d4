// The private PostgreSQL servers of the command line, when no database is
// named:
//  - the default: a per-user server kept running between runs (its data
//    directory and socket under ~/.cache/pg_mln/server), or the cluster that
//    `make demo` left running; a run starts one only when none answers, and
//    cleans up only what it created for itself (its program schema);
//  - with --workdir DIR: a throwaway cluster in DIR, started for one run and
//    removed at the end (also on error or Ctrl-C, through the destructor).
#pragma once

#include <string>

namespace mln::cli {

// A server the run can use: its connection string and where it came from.
struct PrivateServer {
  std::string dsn;          // libpq conninfo, database included
  std::string description;  // for the console ("kept server in ...", "make demo's cluster ...")
  bool started = false;     // this run started it
};

// Finds the kept per-user server or `make demo`'s cluster, or starts the
// kept server (initdb from a cached template on first use).  Ensures the
// database "pg_mln" exists in it.  Throws std::runtime_error with the log
// tail when the server cannot be started.
PrivateServer find_or_start_private_server(bool verbose);

// Stops the kept per-user server (pg_mln --stop-server); returns a message.
std::string stop_private_server();

// The throwaway cluster of --workdir.
class EmbeddedCluster {
 public:
  // Creates `parent`/pg_mln-XXXXXX, runs initdb and starts the server
  // (Unix socket only, no TCP).  Throws std::runtime_error with the log
  // tail on failure, after cleaning up.
  EmbeddedCluster(const std::string& parent, bool verbose);
  ~EmbeddedCluster();
  EmbeddedCluster(const EmbeddedCluster&) = delete;
  EmbeddedCluster& operator=(const EmbeddedCluster&) = delete;

  std::string dsn() const;
  const std::string& dir() const { return dir_; }
  // Stops the server and removes the directory (idempotent).
  void shutdown();

 private:
  std::string dir_;
  std::string bindir_;
  int port_ = 0;
  bool started_ = false;
  bool as_postgres_ = false;
};

// Runs a shell command, as the 'postgres' user when `as_postgres`; returns
// the exit status.
int run_shell(const std::string& cmd, bool as_postgres);
// Single-quotes a string for the shell.
std::string shq(const std::string& s);

}  // namespace mln::cli
