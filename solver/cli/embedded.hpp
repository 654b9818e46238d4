// The embedded default: a private PostgreSQL cluster in a work directory
// that pg_mln owns, started for one run and removed at the end (also on
// error or Ctrl-C, through the destructor).
#pragma once

#include <string>

namespace mln::cli {

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
