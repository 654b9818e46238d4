// Loading a program's catalog state and its symbol dictionary.
#include "pg/program_ctx.hpp"

#include "pg/heap_io.hpp"

#include <algorithm>
#include <cerrno>
#include <functional>
#include <cstdint>
#include <cstdlib>

namespace mln::pg {

namespace {
// Fewer new symbols than this go into the indexes one by one (flush).
constexpr int64_t kRebuildMinRows = 10000;
}  // namespace

ProgramCtx load_program(Spi& spi, const std::string& name) {
  Rows r = spi.query("SELECT schema_name::text, source, coalesce(query, '') FROM mln.programs WHERE name = $1",
                     {text_param(name)});
  if (r.size() == 0)
    throw UserError{ERRCODE_UNDEFINED_OBJECT, "program \"" + name + "\" does not exist", "",
                    "create it with mln.create_program(name, program)"};
  ProgramCtx ctx;
  ctx.name = name;
  ctx.schema = r.text(0, 0);
  std::string source = r.text(0, 1);
  ctx.query = r.text(0, 2);
  ctx.prog = lang::parse_program(source);
  // The catalog's weights win over the source's: mln.learn_weights and
  // mln.restore_weights (and a user's UPDATE) change mln.clauses only.
  Rows w = spi.query("SELECT idx, weight FROM mln.clauses WHERE program = $1 AND NOT hard", {text_param(name)});
  for (size_t i = 0; i < w.size(); ++i) {
    const int idx = w.int4(i, 0);
    if (idx < 0 || static_cast<size_t>(idx) >= ctx.prog.clauses.size()) continue;
    lang::Clause& cl = ctx.prog.clauses[idx];
    if (!cl.hard && cl.weight_var.empty()) cl.weight = w.float8(i, 1);
  }
  ctx.bindings.resize(ctx.prog.preds.size());
  Rows b = spi.query(
      "SELECT idx, bound_relation::text, bound_columns, coalesce(truth_column, '') FROM mln.predicates "
      "WHERE program = $1 AND bound_relation IS NOT NULL",
      {text_param(name)});
  for (size_t i = 0; i < b.size(); ++i) {
    int idx = b.int4(i, 0);
    if (idx < 0 || static_cast<size_t>(idx) >= ctx.bindings.size()) continue;
    Binding& bd = ctx.bindings[idx];
    bd.bound = true;
    bd.relation = b.text(i, 1);
    bd.columns = b.text_array(i, 2);
    bd.truth_column = b.text(i, 3);
  }
  return ctx;
}

void SymbolTable::lock(Spi& spi, const std::string& schema) {
  table_ = qualified(schema, "_symbols");
  spi.exec("LOCK TABLE " + table_ + " IN SHARE ROW EXCLUSIVE MODE");
}

void SymbolTable::load(Spi& spi, const std::string& schema) {
  lock(spi, schema);
  spi_ = nullptr;
  Rows r = spi.query("SELECT id, name FROM " + table_);
  names_.assign(r.size() + 1, std::string());
  ids_.clear();
  by_name_.clear(r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    int32_t id = r.int4(i, 0);
    if (id <= 0) continue;
    if (static_cast<size_t>(id) >= names_.size()) names_.resize(id + 1);
    names_[id] = r.text(i, 1);
    by_name_.find_or_add(names_[id], id, names_);
  }
  next_ = flushed_ = static_cast<int32_t>(names_.size());
  opened_new_.clear();
}

void SymbolTable::open(Spi& spi, const std::string& schema) {
  lock(spi, schema);
  spi_ = &spi;
  ids_.clear();
  names_.assign(1, std::string());
  next_ = flushed_ = spi.query("SELECT coalesce(max(id), 0) + 1 FROM " + table_).int4(0, 0);
  opened_new_.clear();
}

int32_t SymbolTable::find(const std::string& s) {
  if (!spi_) return by_name_.find(s, names_);
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  Rows r = spi_->query("SELECT id FROM " + table_ + " WHERE name = $1", {text_param(s)});
  const int32_t id = r.size() ? r.int4(0, 0) : 0;
  ids_.emplace(s, id);
  return id;
}

namespace {
uint64_t name_hash(std::string_view s) { return std::hash<std::string_view>{}(s); }
}  // namespace

uint64_t NameIds::hash(std::string_view s) { return name_hash(s); }

void NameIds::prefetch_slot(uint64_t h) const {
  if (!slot_.empty()) __builtin_prefetch(&slot_[h & (slot_.size() - 1)]);
}

void NameIds::prefetch_name(uint64_t h, const std::vector<std::string>& names) const {
  if (slot_.empty()) return;
  const uint64_t v = slot_[h & (slot_.size() - 1)];
  if (v != 0 && (v >> 32) == (h >> 32)) __builtin_prefetch(&names[static_cast<uint32_t>(v)]);
}

void NameIds::clear(size_t expected) {
  size_t cap = 1024;
  while (cap < 2 * expected) cap <<= 1;
  slot_.assign(cap, 0);
  used_ = 0;
}

// The slot of s (its hash h): where it is, or the empty slot where it would go.
size_t NameIds::probe(std::string_view s, uint64_t h, const std::vector<std::string>& names) const {
  const size_t mask = slot_.size() - 1;
  const uint64_t tag = h >> 32;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint64_t v = slot_[i];
    if (v == 0 || ((v >> 32) == tag && names[static_cast<uint32_t>(v)] == s)) return i;
  }
}

int32_t NameIds::find(std::string_view s, const std::vector<std::string>& names) const {
  if (slot_.empty()) return 0;
  return static_cast<int32_t>(static_cast<uint32_t>(slot_[probe(s, name_hash(s), names)]));
}

std::pair<int32_t, bool> NameIds::find_or_add(std::string_view s, int32_t id, const std::vector<std::string>& names) {
  return find_or_add(s, name_hash(s), id, names);
}

std::pair<int32_t, bool> NameIds::find_or_add(std::string_view s, uint64_t h, int32_t id,
                                              const std::vector<std::string>& names) {
  if (slot_.empty() || 2 * (used_ + 1) > slot_.size()) grow(names);  // load at most 1/2: short probes
  const size_t i = probe(s, h, names);
  if (slot_[i] != 0) return {static_cast<int32_t>(static_cast<uint32_t>(slot_[i])), false};
  slot_[i] = (h >> 32) << 32 | static_cast<uint32_t>(id);
  ++used_;
  return {id, true};
}

void NameIds::grow(const std::vector<std::string>& names) {
  std::vector<uint64_t> old;
  old.swap(slot_);
  slot_.assign(std::max<size_t>(1024, 2 * old.size()), 0);
  const size_t mask = slot_.size() - 1;
  for (const uint64_t v : old) {
    if (v == 0) continue;
    size_t i = name_hash(names[static_cast<uint32_t>(v)]) & mask;
    while (slot_[i] != 0) i = (i + 1) & mask;
    slot_[i] = v;
  }
}

int32_t SymbolTable::intern(const std::string& s) {
  if (!spi_) return intern_loaded(s, NameIds::hash(s));
  int32_t id = find(s);
  if (id != 0) return id;
  id = next_++;
  ids_[s] = id;
  opened_new_.push_back(s);
  return id;
}

// load(): every name is in by_name_; one lookup (RC at 10^8 interns 5M arguments).
int32_t SymbolTable::intern_loaded(const std::string& s, uint64_t h) {
  const auto [id, absent] = by_name_.find_or_add(s, h, next_, names_);
  if (!absent) return id;
  if (names_.size() <= static_cast<size_t>(next_)) names_.resize(static_cast<size_t>(next_) + 1);
  names_[next_] = s;
  return next_++;
}

// A software pipeline over the batch: the slot of the name kAhead * 2 on is
// asked for, then the name in the slot of the one kAhead on, then this
// name's lookup finds both in the cache.  A slot a later insert or a
// growth moves only makes a hint miss.
void SymbolTable::intern_all(const std::string* s, size_t n, int32_t* ids) {
  if (spi_) {
    for (size_t i = 0; i < n; ++i) ids[i] = intern(s[i]);
    return;
  }
  constexpr size_t kAhead = 8;
  std::vector<uint64_t> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = NameIds::hash(s[i]);
  for (size_t i = 0; i < n; ++i) {
    if (i + 2 * kAhead < n) by_name_.prefetch_slot(h[i + 2 * kAhead]);
    if (i + kAhead < n) by_name_.prefetch_name(h[i + kAhead], names_);
    ids[i] = intern_loaded(s[i], h[i]);
  }
}

std::vector<std::string> SymbolTable::all_names() {
  if (!spi_) return names_;
  std::vector<std::string> names(static_cast<size_t>(next_));
  Rows r = spi_->query("SELECT id, name FROM " + table_);
  for (size_t i = 0; i < r.size(); ++i) {
    const int32_t id = r.int4(i, 0);
    if (id > 0 && id < next_) names[id] = r.text(i, 1);
  }
  for (size_t i = 0; i < opened_new_.size(); ++i) names[static_cast<size_t>(flushed_) + i] = opened_new_[i];
  return names;
}

void SymbolTable::flush() {
  if (next_ == flushed_) return;
  // A batch at least as large as the table (a new program's evidence) gets
  // its index entries by a rebuild rather than one by one (append_symbols).
  const int64_t batch = static_cast<int64_t>(next_) - flushed_;
  const int64_t before = static_cast<int64_t>(flushed_) - 1;  // ids run from 1 (load, open)
  const std::string* names = spi_ ? opened_new_.data() : names_.data() + flushed_;
  append_symbols(table_, flushed_, names, static_cast<size_t>(batch), batch >= kRebuildMinRows && batch >= before);
  flushed_ = next_;
  opened_new_.clear();
}

int32_t parse_int_arg(const std::string& s, const std::string& pred, int line) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || v < INT32_MIN || v > INT32_MAX)
    throw UserError{ERRCODE_INVALID_TEXT_REPRESENTATION,
                    "line " + std::to_string(line) + ": \"" + s + "\" is not an integer (argument of " + pred + ")",
                    "", ""};
  return static_cast<int32_t>(v);
}

}  // namespace mln::pg
