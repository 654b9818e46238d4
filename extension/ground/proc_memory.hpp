// The process's resident memory (Linux /proc/self/status), for the
// grounding statistics' "memory" (issue #45: the grounding backend's
// memory per ground clause).  Plain C++; zeros where /proc is absent.
#pragma once

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace mln::ground {

struct ProcMemory {
  size_t resident = 0;  // VmRSS, bytes
  size_t peak = 0;      // VmHWM: the resident memory's high-water mark
  size_t shared = 0;    // RssShmem: shared memory mapped (a backend's shared buffers)
};

inline ProcMemory proc_memory() {
  ProcMemory m;
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return m;
  char line[256];
  auto field = [&](const char* name, size_t& into) {
    const size_t n = std::strlen(name);
    unsigned long kb = 0;
    if (std::strncmp(line, name, n) == 0 && std::sscanf(line + n, "%lu", &kb) == 1) into = kb * 1024;
  };
  while (std::fgets(line, sizeof line, f)) {
    field("VmRSS:", m.resident);
    field("VmHWM:", m.peak);
    field("RssShmem:", m.shared);
  }
  std::fclose(f);
  return m;
}

// The resident memory, its high-water mark and the shared memory mapped
// after each phase of a grounding, in order.
class MemoryLog {
 public:
  void note(const std::string& phase) { at_.emplace_back(phase, proc_memory()); }
  // {"engine_peak_bytes": E, "backend_peak_bytes": P, "shared_bytes": S,
  //  "phases": {"phase": [resident, peak, shared], ...}}; E only where given.
  std::string json(const size_t* engine_peak) const {
    const ProcMemory now = proc_memory();
    std::string o = "{";
    if (engine_peak) o += "\"engine_peak_bytes\": " + std::to_string(*engine_peak) + ", ";
    o += "\"backend_peak_bytes\": " + std::to_string(now.peak) + ", \"shared_bytes\": " + std::to_string(now.shared) +
         ", \"phases\": {";
    for (size_t i = 0; i < at_.size(); ++i)
      o += (i ? ", \"" : "\"") + at_[i].first + "\": [" + std::to_string(at_[i].second.resident) + ", " +
           std::to_string(at_[i].second.peak) + ", " + std::to_string(at_[i].second.shared) + "]";
    return o + "}}";
  }

 private:
  std::vector<std::pair<std::string, ProcMemory>> at_;
};

}  // namespace mln::ground
