// The inference worker: claims jobs from mln.jobs, reads the ground
// network with binary COPY, solves it (MAP, MC-SAT marginals, or both for a
// dual job), and writes the MAP state / the marginal probabilities back.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "format/network.hpp"

namespace mln::worker {

class Conn;

struct WorkerOptions {
  std::string dsn;
  std::string name;            // worker identity; default host:pid
  int lease_seconds = 10;      // a job whose lease runs out is taken by another worker
  int threads = 0;             // default CPU threads per job (0 = all)
  bool once = false;           // exit when the queue is empty
  int64_t only_job = 0;        // serve this job only, then exit
  int gpu = -1;                // --gpu N: the GPU this worker is bound to (CUDA_VISIBLE_DEVICES), shown with its parts
  std::function<void(const std::string&)> log;  // progress lines; may be empty
  // A transaction of the worker's left idle this long is ended by the
  // server, with its locks: a worker stopped or hung inside one (SIGSTOP, a
  // debugger, a lost machine whose socket stays open) holds up no one for
  // longer than its lease, after which its job is another's.  Its own
  // statements follow each other at once; a transaction that waits on its
  // helpers lifts the limit for itself (read_ranges).
  int idle_transaction_seconds() const { return std::max(lease_seconds, kIdleTransactionFloorSeconds); }
  static constexpr int kIdleTransactionFloorSeconds = 5;
};

// Serves jobs until `stop` is set (or, with once/only_job, the work is
// done).  Returns the number of jobs finished.
int serve(const WorkerOptions& opts, std::atomic<bool>& stop);
// The same over a connection the caller opened (mln_worker's, which asked
// it whether the extension is installed): a role with CONNECTION LIMIT 1
// would otherwise be refused while the first connection's backend exits.
int serve(const WorkerOptions& opts, std::atomic<bool>& stop, std::unique_ptr<Conn> conn);

// Reads the ground network of the program whose schema is `schema`.  With
// a dsn and streams > 1 (and `c` outside a transaction) a large network's
// clause chunks are read over `streams` more connections at once, in one
// snapshot exported by `c`; the result is the same network.
struct ReadStats {
  int connections = 1;   // that read the clauses
  int64_t bytes = 0;     // COPY data received
  std::string fallback;  // why several connections were tried and one read it instead
};
// The network of `program` (its tables in `schema`, checked first:
// worker/trusted.hpp), in one snapshot.
Network read_network(Conn& c, const std::string& program, const std::string& schema, const std::string* dsn = nullptr,
                     int streams = 1, ReadStats* stats = nullptr);

// The starting state a grounding again left for the next MAP or marginal
// job (SQL 0.15.0's <schema>._warm: the last MAP answer's true atoms, by
// their new ids), as Network::init_truth (num_atoms + 1 entries); empty
// when there is none, or when the network was grounded again after
// `net_oid` (its _atoms) was read.  Checked like the network's tables.
std::vector<uint8_t> read_warm_start(Conn& c, const std::string& program, const std::string& schema,
                                     const std::string& net_oid, int32_t num_atoms);

// What a grounding carried from the previous answers (issue #62;
// <schema>._carried, written by mln.ground with the network: see
// extension/pg/carry.hpp): the MAP answer and the marginals by id of the
// new network, the atoms the change touched where they are known, and the
// MAP answer's cost and bound (ground_stats' carried).  The MAP answer is
// for the network's first MAP answer (none in _map_info yet), the
// marginals for its first marginals (_marginal absent or empty): a later
// job starts from its own network's.  A MAP answer is a start for any MAP
// job; it is kept on the untouched components (map_same), and marginals are
// kept at all, only for job `job_id` with the options of the job that made
// them (a job asking for more samples or time samples everything).  Empty
// when there is none, or when the network was grounded again after
// `net_oid` was read.  Checked like the network's tables.
struct LiveChange {
  bool touched_known = false;
  std::vector<int32_t> touched;
  bool have_map = false, map_same = false;
  std::vector<uint8_t> truth;   // num_atoms + 1 entries
  bool have_bound = false;
  double cost = 0, bound = 0;
  bool optimal = false;
  bool have_marginals = false;
  std::vector<double> prob;     // num_atoms + 1 entries, NaN where none was carried
};
LiveChange read_live_change(Conn& c, const std::string& program, const std::string& schema,
                            const std::string& net_oid, int32_t num_atoms, int64_t job_id);

// Connections for reading a large network: half the cores, 1 to 8 (each
// takes a core on each side, the server's COPY and the worker's decoding;
// MLN_READ_STREAMS overrides).
int read_streams_default();

}  // namespace mln::worker
