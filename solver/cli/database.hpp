// The database a run works in, and Ctrl-C's cancel of what the server is
// doing: shared by Tuffy's modes (main.cpp) and -problog (problog_mode.cpp).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "cli/embedded.hpp"
#include "cli/options.hpp"
#include "worker/pq.hpp"

namespace mln::cli {

// The database of the run: named (--dsn, -conf, PG* variables); else a
// throwaway cluster in --workdir; else the kept private server (started only
// when none is running).
struct Database {
  std::unique_ptr<EmbeddedCluster> cluster;
  std::string dsn;
  bool embedded = false;  // a private server: no worker but this process's serves it
};
Database open_database(const Options& o);

// While alive, watches `interrupted` (set by the SIGINT handler) and, once
// it is set, cancels the statement `c` is running: the server stops at its
// next interrupt check and the call fails with "canceling statement".
class CancelOnInterrupt {
 public:
  CancelOnInterrupt(mln::worker::Conn& c, const std::atomic<bool>& interrupted);
  ~CancelOnInterrupt();
  CancelOnInterrupt(const CancelOnInterrupt&) = delete;
  CancelOnInterrupt& operator=(const CancelOnInterrupt&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread watcher_;
};

}  // namespace mln::cli
