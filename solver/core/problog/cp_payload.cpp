// A ground CP-theory as bytes (core/problog/cp_payload.hpp).
#include "core/problog/cp_payload.hpp"

#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace mln::problog {
namespace {

const char kMagic[8] = {'M', 'L', 'N', 'C', 'P', '0', '0', '1'};
const uint32_t kByteOrder = 0x01020304;  // reads back otherwise on a host of the other byte order

class Writer {
 public:
  template <typename T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  template <typename T>
  void put(const std::vector<T>& v) {
    put(static_cast<uint64_t>(v.size()));
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void put(const std::string& s) {
    put(static_cast<uint64_t>(s.size()));
    out_.append(s);
  }
  void bytes(const char* p, size_t n) { out_.append(p, n); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

[[noreturn]] void corrupt(const std::string& why) { throw std::invalid_argument("corrupt ground program: " + why); }

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <typename T>
  T get() {
    T v;
    std::memcpy(&v, need(sizeof(T)), sizeof(T));
    return v;
  }
  template <typename T>
  void get(std::vector<T>& v) {
    const uint64_t n = get<uint64_t>();
    if (n > left() / sizeof(T)) corrupt("an array longer than the bytes left");
    v.resize(static_cast<size_t>(n));
    if (n) std::memcpy(v.data(), need(static_cast<size_t>(n) * sizeof(T)), static_cast<size_t>(n) * sizeof(T));
  }
  std::string text() {
    const uint64_t n = get<uint64_t>();
    if (n > left()) corrupt("a text longer than the bytes left");
    return std::string(need(static_cast<size_t>(n)), static_cast<size_t>(n));
  }
  const char* need(size_t n) {
    if (n > left()) corrupt("it ends early");
    const char* p = in_.data() + at_;
    at_ += n;
    return p;
  }
  size_t left() const { return in_.size() - at_; }

 private:
  const std::string& in_;
  size_t at_ = 0;
};

// Offsets that start at 0, never decrease and end at the array's length
// (CpProgram::validate checks the ends and the atoms).
void check_offsets(const std::vector<int64_t>& off, size_t n, const char* what) {
  if (off.empty() || off.front() != 0 || off.back() != static_cast<int64_t>(n))
    corrupt(std::string(what) + " offsets do not cover the array");
  for (size_t i = 1; i < off.size(); ++i)
    if (off[i] < off[i - 1]) corrupt(std::string(what) + " offsets decrease");
}

}  // namespace

std::string encode_cp_payload(const CpProgram& cp, const std::vector<std::string>& texts,
                              const std::vector<int32_t>& index) {
  if (texts.size() != index.size()) throw std::invalid_argument("encode_cp_payload: texts and indices differ in length");
  Writer w;
  w.bytes(kMagic, sizeof kMagic);
  w.put(kByteOrder);
  w.put(cp.num_atoms);
  w.put(cp.stratum_begin), w.put(cp.pos_off), w.put(cp.neg_off), w.put(cp.head_off);
  w.put(cp.pos), w.put(cp.neg), w.put(cp.head), w.put(cp.head_cum), w.put(cp.head_cond);
  w.put(cp.queries), w.put(cp.evidence), w.put(cp.evidence_value);
  w.put(index);
  for (const std::string& t : texts) w.put(t);
  return w.take();
}

CpPayload decode_cp_payload(const std::string& bytes) {
  Reader r(bytes);
  if (r.left() < sizeof kMagic || std::memcmp(r.need(sizeof kMagic), kMagic, sizeof kMagic) != 0)
    corrupt("not a ground CP-theory of this version");
  if (r.get<uint32_t>() != kByteOrder) corrupt("written on a host of the other byte order");
  CpPayload p;
  CpProgram& cp = p.cp;
  cp.num_atoms = r.get<int32_t>();
  if (cp.num_atoms < 0) corrupt("a negative atom count");
  r.get(cp.stratum_begin), r.get(cp.pos_off), r.get(cp.neg_off), r.get(cp.head_off);
  r.get(cp.pos), r.get(cp.neg), r.get(cp.head), r.get(cp.head_cum), r.get(cp.head_cond);
  r.get(cp.queries), r.get(cp.evidence), r.get(cp.evidence_value);
  r.get(p.query_index);
  for (size_t i = 0; i < p.query_index.size(); ++i) {
    p.query_text.push_back(r.text());
    if (p.query_index[i] < -1 || p.query_index[i] >= static_cast<int64_t>(cp.queries.size()))
      corrupt("query row " + std::to_string(i + 1) + " names no query atom");
  }
  if (r.left() != 0) corrupt(std::to_string(r.left()) + " bytes after its end");
  check_offsets(cp.pos_off, cp.pos.size(), "body");
  check_offsets(cp.neg_off, cp.neg.size(), "negated body");
  check_offsets(cp.head_off, cp.head.size(), "head");
  try {
    cp.validate();
  } catch (const std::invalid_argument& e) {
    corrupt(e.what());
  }
  return p;
}

}  // namespace mln::problog
