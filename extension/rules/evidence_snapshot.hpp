// A rule learning job's inputs as bytes: what program_task reads of the
// program's evidence (each predicate's atoms of a truth value, and the
// symbols), recorded in the queueing backend with the caller's privileges
// and replayed in the worker.  The worker then runs no query over a table a
// role owns for a rules job, and needs no grant on the evidence (issue #59).
// Plain C++: the backend (over SPI) and the worker (over libpq) share it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "rules/program_task.hpp"

namespace mln::rules {

// Passes every read on to `src` and keeps what it returned.
class RecordingEvidence : public EvidenceSource {
 public:
  explicit RecordingEvidence(EvidenceSource& src) : src_(src) {}
  gpu::HostTable atoms(const DeclaredPredicate& p, bool truth) override;
  std::vector<std::pair<int32_t, std::string>> symbols() override;
  // The reads so far, as bytes (little-endian; a version word first).
  std::string encode() const;

 private:
  EvidenceSource& src_;
  std::map<std::pair<std::string, bool>, gpu::HostTable> atoms_;
  std::vector<std::pair<int32_t, std::string>> symbols_;
};

// The reads encode() kept; a read it did not keep is an error (a snapshot
// of another program or version).  Throws TaskError on corrupt bytes.
class SnapshotEvidence : public EvidenceSource {
 public:
  explicit SnapshotEvidence(const std::string& bytes);
  gpu::HostTable atoms(const DeclaredPredicate& p, bool truth) override;
  std::vector<std::pair<int32_t, std::string>> symbols() override { return symbols_; }

 private:
  std::map<std::pair<std::string, bool>, gpu::HostTable> atoms_;
  std::vector<std::pair<int32_t, std::string>> symbols_;
};

}  // namespace mln::rules
