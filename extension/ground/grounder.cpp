// ground(): Tuffy's grounding pipeline (reference §5.1) as phases over the
// engine, plus the shared context (predicate tables and their relations).
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <map>
#include <parallel/algorithm>
#include <utility>
#include <chrono>
#include <numeric>

#include "ground/internal.hpp"

namespace mln::ground {
namespace detail {

Ctx::Ctx(const GroundInput& i, gpu::Engine& e, const GroundOptions& o)
    : in(i), prog(*i.program), eng(e), opts(o) {
  preds.resize(prog.preds.size());
  for (size_t p = 0; p < prog.preds.size(); ++p) {
    PredState& s = preds[p];
    s.decl = &prog.preds[p];
    s.index = static_cast<int>(p);
    s.arity = s.decl->arity();
    s.closed_world = s.decl->closed_world;
    s.completely_specified = s.decl->completely_specified;
    s.args.resize(s.arity);
  }
  for (int p : opts.extra_closed_world) {
    if (p < 0 || p >= static_cast<int>(preds.size()))
      throw lang::LangError(lang::LangError::Kind::UnknownPredicate, 0, 0, "", "unknown predicate in -cw");
    preds[p].closed_world = true;
  }
  for (const auto& td : in.type_domains) {
    auto& d = domains[td.first];
    d.insert(d.end(), td.second.begin(), td.second.end());
  }
  for (const auto& q : in.queries) {
    if (q.pred < 0 || q.pred >= static_cast<int>(preds.size()))
      throw lang::LangError(lang::LangError::Kind::UnknownPredicate, 0, 0, "", "query on an unknown predicate");
    QueryPattern qp = q;
    if (qp.args.empty())
      for (int k = 0; k < preds[q.pred].arity; ++k) qp.args.push_back(-(k + 1));
    if (static_cast<int>(qp.args.size()) != preds[q.pred].arity)
      throw lang::LangError(lang::LangError::Kind::ArityMismatch, 0, 0, "", "query arity mismatch");
    preds[q.pred].queries.push_back(qp);
    preds[q.pred].has_query = true;
  }
  gpu::HostTable u;
  u.cols.push_back({0});
  unit = eng.upload(u);
  relevant.assign(prog.clauses.size(), 0);
  if (opts.learning) {
    training.resize(preds.size());
    bool any = false;
    for (const PredState& s : preds) {
      if (!s.has_query) continue;
      any = true;
      if (s.closed_world)
        throw lang::LangError(lang::LangError::Kind::BadValue, 0, 0, s.decl->name,
                              "query predicate " + s.decl->name +
                                  " is closed-world: learning needs its atoms unknown (its evidence is the training world)");
    }
    if (!any)
      throw lang::LangError(lang::LangError::Kind::BadValue, 0, 0, "",
                            "no query predicates: learning needs the predicates whose evidence is the training world");
  }
}

const gpu::Relation& Ctx::full(int p) {
  PredState& s = preds[p];
  if (s.full_valid) return s.full;
  PredCols pc = s.cols();
  size_t n = s.rows();
  gpu::HostTable t;
  t.cols.resize(pc.ncols());
  for (int k = 0; k < pc.k; ++k) t.cols[k] = s.args[k];
  t.cols[pc.tid()].resize(n);
  std::iota(t.cols[pc.tid()].begin(), t.cols[pc.tid()].end(), 0);
  t.cols[pc.truth()].resize(n);
  t.cols[pc.club()].resize(n);
  t.cols[pc.prior()].resize(n);
  t.cols[pc.zero()].assign(n, 0);
  for (size_t r = 0; r < n; ++r) {
    t.cols[pc.truth()][r] = s.truth[r] < 0 ? kTruthNull : s.truth[r];
    t.cols[pc.club()][r] = s.club[r];
    t.cols[pc.prior()][r] = std::isnan(s.prior[r]) ? 0 : 1;
  }
  s.full = eng.upload(t);
  s.full_valid = true;
  return s.full;
}

size_t Ctx::append(int p, std::vector<std::vector<int32_t>> rows, int8_t truth, uint8_t club, double prior) {
  PredState& s = preds[p];
  size_t n = rows.empty() ? 0 : rows[0].size();
  if (n == 0) return 0;
  // Engine output order is unspecified: sort so that tuple ids are
  // deterministic (rows of at most two columns as one 64-bit key each, in
  // the same order: a query's domain is millions of rows).
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  if (rows.size() <= 2) {
    auto part = [](int32_t v) { return static_cast<uint64_t>(static_cast<uint32_t>(v) ^ 0x80000000u); };
    std::vector<std::pair<uint64_t, size_t>> key(n);
    for (size_t i = 0; i < n; ++i)
      key[i] = {part(rows[0][i]) << 32 | (rows.size() == 2 ? part(rows[1][i]) : 0), i};
    std::sort(key.begin(), key.end());
    for (size_t i = 0; i < n; ++i) idx[i] = key[i].second;
  } else {
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      for (const auto& col : rows)
        if (col[a] != col[b]) return col[a] < col[b];
      return false;
    });
  }
  for (int k = 0; k < s.arity; ++k)
    for (size_t i : idx) s.args[k].push_back(rows[k][i]);
  s.truth.insert(s.truth.end(), n, truth);
  s.club.insert(s.club.end(), n, club);
  s.prior.insert(s.prior.end(), n, prior);
  if (!std::isnan(prior)) s.has_soft = true;
  s.full_valid = false;
  return n;
}

const gpu::Relation& Ctx::domain(const std::string& type) {
  auto it = domain_rels.find(type);
  if (it != domain_rels.end()) return it->second;
  gpu::HostTable t;
  t.cols.resize(2);
  auto d = domains.find(type);
  if (d != domains.end()) {
    t.cols[1] = d->second;
    t.cols[0].assign(d->second.size(), 0);
  }
  return domain_rels.emplace(type, eng.upload(t)).first->second;
}

int32_t Ctx::constant_id(const lang::Term& t, lang::TypeKind kind) const {
  return rule_constant_id(t, kind, in.symbols);
}

std::string Ctx::symbol_text(int32_t v, lang::TypeKind kind) const {
  if (kind == lang::TypeKind::Int) return std::to_string(v);
  const std::string* s = in.symbols.name_of(v);
  return s ? *s : std::string();
}

void RawClauses::add(std::vector<int32_t>& l, double w, int32_t from) {
  l.erase(std::remove(l.begin(), l.end(), 0), l.end());
  std::sort(l.begin(), l.end());
  l.erase(std::unique(l.begin(), l.end()), l.end());
  if (l.empty()) return;
  if (l.size() == 1 && l[0] < 0) {  // unit flipping: [-a], w  ->  [a], -w
    l[0] = -l[0];
    w = -w;
    from = -from;
  }
  add_sorted(l.data(), l.size(), w, from);
}

void RawClauses::add_sorted(const int32_t* l, size_t n, double w, int32_t from) {
  if (n > 0x7fffffff) throw std::length_error("a ground clause of more than 2^31 literals");
  const uint64_t h = clause_hash(l, n);
  Bucket& b = buckets_[bucket_of(h)];
  const int32_t wi = n < 0x8000 ? weight_index(w) : -1;
  const int hw = (wi >= 0 ? 1 : 3) + (track_origins ? 1 : 0);
  int32_t* r = room(b, hw + n);
  if (wi >= 0) {
    r[0] = static_cast<int32_t>(0x80000000u | (static_cast<uint32_t>(n) << 16) | static_cast<uint32_t>(wi));
  } else {
    r[0] = static_cast<int32_t>(n);
    std::memcpy(r + 1, &w, sizeof w);
  }
  if (track_origins) r[hw - 1] = from;
  std::memcpy(r + hw, l, n * sizeof(int32_t));
  ++b.clauses;
  ++n_;
  lits_ += n;
}

int32_t RawClauses::weight_index(double w) {
  uint64_t bits;
  std::memcpy(&bits, &w, sizeof bits);
  if (bits == last_bits_ && last_index_ != -2) return last_index_;
  auto it = index_.find(bits);
  int32_t i = -1;
  if (it != index_.end()) {
    i = it->second;
  } else if (weights_.size() < kMaxWeights) {
    i = static_cast<int32_t>(weights_.size());
    weights_.push_back(w);
    index_.emplace(bits, i);
  }
  last_bits_ = bits;
  last_index_ = i;
  return i;
}

// A record of `words` words at the end of bucket b's last block, or in a
// new block (twice the last one's size, 64 kB to 4 MB, larger for a longer
// record).
int32_t* RawClauses::room(Bucket& b, size_t words) {
  if (b.blocks.empty() || b.blocks.back().cap - b.blocks.back().used < words) {
    constexpr size_t kFirst = size_t{64} << 10, kLast = size_t{4} << 20;  // bytes
    size_t bytes = b.blocks.empty() ? kFirst : std::min(kLast, b.blocks.back().cap * sizeof(int32_t) * 2);
    bytes = std::max(bytes, (words * sizeof(int32_t) + kFirst - 1) / kFirst * kFirst);
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    b.blocks.push_back(Block{static_cast<int32_t*>(p), 0, bytes / sizeof(int32_t)});
  }
  Block& k = b.blocks.back();
  int32_t* r = k.words + k.used;
  k.used += words;
  return r;
}

void RawClauses::release(size_t b) {
  for (Block& k : buckets_[b].blocks) munmap(k.words, k.cap * sizeof(int32_t));
  buckets_[b].blocks = std::vector<Block>();
}

void RawClauses::clear() {
  for (size_t b = 0; b < buckets_.size(); ++b) release(b);
}

// Loads evidence into the predicate tables, deduplicating identical rows
// (the last line for a tuple wins; Tuffy would keep every copy).
void load_evidence(Ctx& c) {
  for (size_t p = 0; p < c.preds.size() && p < c.in.evidence.size(); ++p) {
    const PredEvidence& ev = c.in.evidence[p];
    PredState& s = c.preds[p];
    size_t n = ev.rows();
    if (n == 0) continue;
    if (c.opts.learning && s.has_query) {  // the training world, not evidence
      c.training[p] = ev;
      continue;
    }
    if (static_cast<int>(ev.args.size()) != s.arity)
      throw lang::LangError(lang::LangError::Kind::ArityMismatch, 0, 0, s.decl->name, "evidence arity mismatch");
    // Rows to keep: the last of each run of identical argument tuples, in
    // row order.  Only equality matters here, so tuples of at most two
    // arguments are packed into one 64-bit key and sorted as (key, row)
    // pairs with libstdc++'s parallel sort: one integer compare instead of
    // a column walk per comparison (docs/performance.md, "Measured choices").
    std::vector<uint8_t> keep(n, 0);
    if (s.arity <= 2) {
      std::vector<std::pair<uint64_t, uint32_t>> key(n);
      for (size_t r = 0; r < n; ++r) {
        uint64_t k = 0;
        for (int a = 0; a < s.arity; ++a) k = (k << 32) | static_cast<uint32_t>(ev.args[a][r]);
        key[r] = {k, static_cast<uint32_t>(r)};
      }
      __gnu_parallel::sort(key.begin(), key.end());
      for (size_t i = 0; i < n; ++i)
        if (i + 1 == n || key[i].first != key[i + 1].first) keep[key[i].second] = 1;
    } else {
      std::vector<size_t> idx(n);
      std::iota(idx.begin(), idx.end(), 0);
      auto less = [&](size_t a, size_t b) {
        for (const auto& col : ev.args)
          if (col[a] != col[b]) return col[a] < col[b];
        return false;
      };
      __gnu_parallel::stable_sort(idx.begin(), idx.end(), less);
      for (size_t i = 0; i < n; ++i)
        if (i + 1 == n || less(idx[i], idx[i + 1])) keep[idx[i]] = 1;  // last of each run
    }
    const size_t kept = static_cast<size_t>(std::count(keep.begin(), keep.end(), 1));
    for (int k = 0; k < s.arity; ++k) s.args[k].reserve(s.args[k].size() + kept);
    s.truth.reserve(s.truth.size() + kept);
    s.prior.reserve(s.prior.size() + kept);
    s.club.reserve(s.club.size() + kept);
    for (size_t r = 0; r < n; ++r) {
      if (!keep[r]) continue;
      for (int k = 0; k < s.arity; ++k) s.args[k].push_back(ev.args[k][r]);
      double pr = r < ev.prior.size() ? ev.prior[r] : std::nan("");
      if (!std::isnan(pr) && pr > 0 && pr < 1) {
        s.truth.push_back(1);  // Tuffy stores soft evidence as truth TRUE, club 0
        s.prior.push_back(pr);
        s.club.push_back(0);
        s.has_soft = true;
      } else {
        bool t = std::isnan(pr) ? ev.truth[r] != 0 : pr >= 1;
        s.truth.push_back(t ? 1 : 0);
        s.prior.push_back(std::nan(""));
        s.club.push_back(2);
      }
    }
    s.full_valid = false;
  }
}

}  // namespace detail

namespace {

// Learning: each atom's truth in the training world (the query predicates'
// held-back evidence; an atom without a row is false, as in Tuffy).
void training_world(detail::Ctx& c, GroundOutput& out) {
  out.training_truth.assign(out.atoms.size() + 1, 0);
  for (auto& s : c.preds) {
    const PredEvidence& ev = c.training[s.index];
    if (ev.rows() == 0) continue;
    std::map<std::vector<int32_t>, int32_t> id_of;
    for (size_t r = 0; r < s.rows(); ++r) {
      if (!s.atom_id[r]) continue;
      std::vector<int32_t> a(s.arity);
      for (int k = 0; k < s.arity; ++k) a[k] = s.args[k][r];
      id_of.emplace(std::move(a), s.atom_id[r]);
    }
    std::vector<int32_t> a(s.arity);
    for (size_t r = 0; r < ev.rows(); ++r) {  // the last row of a tuple wins, as in load_evidence
      for (int k = 0; k < s.arity; ++k) a[k] = ev.args[k][r];
      auto it = id_of.find(a);
      if (it == id_of.end()) continue;  // outside the query patterns
      const double pr = r < ev.prior.size() ? ev.prior[r] : std::nan("");
      out.training_truth[it->second] = std::isnan(pr) ? ev.truth[r] != 0 : pr >= 0.5;
    }
  }
}

// Collects true query evidence (club 3, truth true), printed by MAP output.
void collect_true_query_evidence(detail::Ctx& c, GroundOutput& out) {
  for (auto& s : c.preds) {
    for (size_t r = 0; r < s.rows(); ++r) {
      if (s.club[r] != 3 || s.truth[r] != 1) continue;
      std::vector<int32_t> a(s.arity);
      for (int k = 0; k < s.arity; ++k) a[k] = s.args[k][r];
      out.true_query_evidence.emplace_back(s.index, std::move(a));
    }
  }
}

}  // namespace

GroundOutput ground(const GroundInput& in, gpu::Engine& eng, const GroundOptions& opts) {
  using Clock = std::chrono::steady_clock;
  if (!in.program) throw lang::LangError(lang::LangError::Kind::EmptyProgram, 0, 0, "", "no program");
  detail::Ctx c(in, eng, opts);
  GroundOutput out;
  auto t0 = Clock::now();
  auto phase = [&](const std::string& name, const std::function<void()>& f) {
    c.progress(name, 0.0);
    f();
    auto t1 = Clock::now();
    out.phases.push_back({name, std::chrono::duration<double>(t1 - t0).count()});
    t0 = t1;
    c.progress(name, 1.0);
  };
  detail::RawClauses raw;
  raw.track_origins = opts.learning;
  phase("evidence", [&] { detail::load_evidence(c); });
  phase("kbmc", [&] {
    detail::compute_safe_ref_only(c);
    detail::run_kbmc(c, out);
  });
  phase("rules", [&] { detail::run_rules(c); });
  phase("queries", [&] { detail::mark_queries(c); });
  phase("closure", [&] {
    if (opts.activate_all || opts.learning) detail::activate_all(c);
    else detail::compute_closure(c, out);
  });
  phase("atoms", [&] {
    detail::build_atom_table(c, out);
    if (opts.learning) training_world(c, out);
  });
  phase("clauses", [&] { detail::ground_active_clauses(c, raw); });
  phase("soft_evidence", [&] { detail::add_soft_evidence_clauses(c, out, raw); });
  phase("key_constraints", [&] { detail::add_key_constraint_clauses(c, raw); });
  phase("consolidate", [&] {
    if (opts.learning) detail::consolidate(raw, out.network.clauses, &out.origin_off, &out.origins);
    else if (opts.on_clauses) detail::consolidate_streamed(raw, out.network.clauses, opts.on_clauses);
    else detail::consolidate(raw, out.network.clauses);
    out.network.num_atoms = static_cast<int32_t>(out.atoms.size());
    out.network.is_query.assign(out.atoms.size() + 1, 0);
    for (size_t i = 0; i < out.atoms.size(); ++i) out.network.is_query[i + 1] = out.atoms[i].is_query;
    collect_true_query_evidence(c, out);
  });
  raw.clear();  // consolidate() gave back each bucket it merged
  if (opts.unit_propagate && !opts.learning)
    phase("unit_propagation", [&] { out.unit_propagation = unit_propagate(out.network); });
  for (size_t i = 0; i < c.relevant.size(); ++i)
    if (c.relevant[i]) out.relevant_clauses.push_back(static_cast<int>(i));
  return out;
}

}  // namespace mln::ground

namespace mln::ground {

int32_t rule_constant_id(const lang::Term& t, lang::TypeKind kind,
                         const Symbols& symbols) {
  if (kind == lang::TypeKind::Int) {
    try {
      size_t pos = 0;
      long long v = std::stoll(t.text, &pos);
      if (pos == t.text.size()) return static_cast<int32_t>(v);
    } catch (...) {
    }
    throw lang::LangError(lang::LangError::Kind::TypeClash, 0, 0, t.text,
                          "non-integer constant '" + t.text + "' in an integer argument");
  }
  const int32_t id = symbols.id_of(t.text);
  if (id == 0)
    throw lang::LangError(lang::LangError::Kind::BadValue, 0, 0, t.text,
                          "constant '" + t.text + "' is missing from the symbol table");
  return id;
}

int32_t Symbols::id_of(const std::string& s) const {
  if (lookup) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const int32_t id = lookup(s);
    ids_.emplace(s, id);
    return id;
  }
  for (; indexed_ < names.size(); ++indexed_) ids_.emplace(names[indexed_], static_cast<int32_t>(indexed_));
  auto it = ids_.find(s);
  return it == ids_.end() ? 0 : it->second;
}

const std::string* Symbols::name_of(int32_t id) const {
  const std::vector<std::string>* v = &names;
  if (load_names) {
    if (!have_loaded_) loaded_ = load_names();
    have_loaded_ = true;
    v = &loaded_;
  }
  if (id <= 0 || static_cast<size_t>(id) >= v->size()) return nullptr;
  return &(*v)[id];
}

}  // namespace mln::ground
