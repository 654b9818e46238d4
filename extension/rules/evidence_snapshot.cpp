// The rules job's input bytes (evidence_snapshot.hpp): a version word, the
// atoms tables (name, truth, columns, rows, then each column's values), the
// symbols (id, name).  Integers little-endian, as the machines that run the
// backend and the worker are.
#include "rules/evidence_snapshot.hpp"

#include <cstring>

namespace mln::rules {

namespace {

constexpr uint32_t kVersion = 0x524c5331;  // "RLS1"

template <class T>
void put(std::string& o, T v) {
  o.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_text(std::string& o, const std::string& s) {
  put<uint32_t>(o, static_cast<uint32_t>(s.size()));
  o += s;
}

class Reader {
 public:
  explicit Reader(const std::string& b) : b_(b) {}
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, b_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string text() {
    const uint32_t n = get<uint32_t>();
    need(n);
    std::string s = b_.substr(at_, n);
    at_ += n;
    return s;
  }
  void values(std::vector<int32_t>& v, uint64_t n) {
    need(n * sizeof(int32_t));
    v.resize(n);
    std::memcpy(v.data(), b_.data() + at_, n * sizeof(int32_t));
    at_ += n * sizeof(int32_t);
  }
  bool done() const { return at_ == b_.size(); }

 private:
  void need(uint64_t n) const {
    if (n > b_.size() - at_) throw TaskError("corrupt rules job input: it ends early");
  }
  const std::string& b_;
  size_t at_ = 0;
};

}  // namespace

gpu::HostTable RecordingEvidence::atoms(const DeclaredPredicate& p, bool truth) {
  gpu::HostTable t = src_.atoms(p, truth);
  atoms_[{p.name, truth}] = t;
  return t;
}

std::vector<std::pair<int32_t, std::string>> RecordingEvidence::symbols() {
  symbols_ = src_.symbols();
  return symbols_;
}

std::string RecordingEvidence::encode() const {
  std::string o;
  put(o, kVersion);
  put<uint32_t>(o, static_cast<uint32_t>(atoms_.size()));
  for (const auto& [key, t] : atoms_) {
    put_text(o, key.first);
    put<uint8_t>(o, key.second ? 1 : 0);
    put<uint32_t>(o, static_cast<uint32_t>(t.ncols()));
    put<uint64_t>(o, t.rows());
    for (const auto& c : t.cols) o.append(reinterpret_cast<const char*>(c.data()), c.size() * sizeof(int32_t));
  }
  put<uint64_t>(o, symbols_.size());
  for (const auto& [id, name] : symbols_) {
    put<int32_t>(o, id);
    put_text(o, name);
  }
  return o;
}

SnapshotEvidence::SnapshotEvidence(const std::string& bytes) {
  Reader r(bytes);
  if (r.get<uint32_t>() != kVersion) throw TaskError("rules job input of an unknown format");
  for (uint32_t n = r.get<uint32_t>(), k = 0; k < n; ++k) {
    const std::string name = r.text();
    const bool truth = r.get<uint8_t>() != 0;
    gpu::HostTable t;
    t.cols.resize(r.get<uint32_t>());
    const uint64_t rows = r.get<uint64_t>();
    for (auto& c : t.cols) r.values(c, rows);
    atoms_[{name, truth}] = std::move(t);
  }
  for (uint64_t n = r.get<uint64_t>(), k = 0; k < n; ++k) {
    const int32_t id = r.get<int32_t>();
    symbols_.emplace_back(id, r.text());
  }
  if (!r.done()) throw TaskError("corrupt rules job input: bytes after its end");
}

gpu::HostTable SnapshotEvidence::atoms(const DeclaredPredicate& p, bool truth) {
  const auto it = atoms_.find({p.name, truth});
  if (it == atoms_.end())
    throw TaskError("the rules job's input holds no " + std::string(truth ? "true" : "false") + " atoms of \"" +
                    p.name + "\" (queue the job again)");
  return it->second;
}

}  // namespace mln::rules
