// How many threads a computation starts, one rule for the operator engine,
// the samplers and the solvers: as many as asked when positive, else one per
// core; never more than the cores.  Beyond them threads only contend, and a
// per-process limit (ulimit -u, a container's pids.max) can refuse them:
// libgomp then ends the process, and a std::thread pool would abort it.
#pragma once

#include <algorithm>
#include <thread>

namespace mln {

inline int machine_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// `requested` > 0: at most the cores; otherwise (0 = all cores) the cores.
inline int usable_threads(int requested) {
  return requested > 0 ? std::min(requested, machine_threads()) : machine_threads();
}

// The same cap, keeping 0 ("all cores", decided later) as it is.
inline int capped_threads(int requested) { return requested > 0 ? std::min(requested, machine_threads()) : requested; }

}  // namespace mln
