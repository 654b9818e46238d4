// Reading the ground network: binary COPY of the atoms and of the chunked
// clause rows, their arrays as raw little-endian bytes (mln._array_le).
// A network of several chunks is read over several connections at once,
// each a range of the chunks, all in one exported snapshot (as pg_dump -j
// does): the server side of one COPY (reading the chunks, their arrays as
// bytea) runs on one core, 11.4 s of RC at 10^8 clauses on an H100 host.
#include <algorithm>
#include <limits>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include "format/clause_chunks.hpp"
#include "worker/pq.hpp"
#include "worker/trusted.hpp"
#include "worker/worker.hpp"

namespace mln::worker {

namespace {

// Appends the clause chunks that `sql` selects (offsets, lits, weights as
// _array_le bytes, and with `codes` the weight codes, in chunk order) to
// `cs`: with codes the weights are the chunk's dictionary
// (format/clause_chunks.hpp).
void read_chunks(Conn& c, const std::string& sql, bool codes, ClauseSet& cs) {
  std::vector<std::pair<const char*, int32_t>> f;
  std::vector<int32_t> offs;
  std::vector<double> dict;
  bool first = true;
  const size_t fields = codes ? 4 : 3;
  // One memcpy per chunk at each end instead of a send function per element.
  c.copy_out(sql, [&](const char* data, size_t len) {
    if (binary::parse_row(data, len, first, f)) {
      if (f.size() != fields || std::any_of(f.begin(), f.end(), [](const auto& x) { return x.second < 0; }))
        throw DbError("corrupt ground network: a clause chunk row with NULLs");
      offs.clear();
      binary::le_int4s(f[0].first, f[0].second, offs);
      const size_t lits_before = cs.lits.size(), weights_before = cs.weights.size();
      binary::le_int4s(f[1].first, f[1].second, cs.lits);
      if (codes) {
        dict.clear();
        binary::le_float8s(f[2].first, f[2].second, dict);
        const size_t n = static_cast<size_t>(f[3].second);
        cs.weights.resize(weights_before + n);
        if (!chunks::decode_weights(dict.data(), dict.size(), reinterpret_cast<const uint8_t*>(f[3].first), n,
                                    cs.weights.data() + weights_before))
          throw DbError("corrupt ground network: a clause chunk's weight code past its dictionary");
      } else {
        binary::le_float8s(f[2].first, f[2].second, cs.weights);
      }
      const int64_t base = static_cast<int64_t>(lits_before);
      if (offs.empty() || offs.size() != cs.weights.size() - weights_before + 1 || offs.front() != 0 ||
          static_cast<size_t>(offs.back()) != cs.lits.size() - lits_before)
        throw DbError("corrupt ground network: a clause chunk's offsets do not match its literals");
      for (size_t i = 1; i < offs.size(); ++i) cs.offsets.push_back(base + offs[i]);
    }
    first = false;
  });
}

std::string chunk_sql(const std::string& s, bool codes, const std::string& where) {
  return "COPY (SELECT mln._array_le(offsets), mln._array_le(lits), mln._array_le(weights)" +
         std::string(codes ? ", wcode" : "") + " FROM " + s + "._clauses" + where +
         " ORDER BY chunk) TO STDOUT (FORMAT binary)";
}

// Whether the table has the weight codes' column (grounded since 0.12.0;
// before, a weight per clause).
bool has_codes(Conn& c, const std::string& s) {
  return c.exec(chunks::kHasCodesSql, {s + "._clauses"}).get(0, 0) == "t";
}

// The atoms: is_query by id, and the atom count (the largest id seen;
// _atoms has no index, it is read whole).
void read_atoms(Conn& c, const std::string& s, Network& net) {
  std::vector<std::pair<const char*, int32_t>> f;
  bool first = true;
  net.num_atoms = 0;
  net.is_query.assign(1, 0);
  c.copy_out("COPY (SELECT id, is_query FROM " + s + "._atoms) TO STDOUT (FORMAT binary)",
             [&](const char* data, size_t len) {
               if (binary::parse_row(data, len, first, f)) {
                 const int32_t id = binary::int4(f[0].first);
                 if (id <= 0) throw DbError("corrupt ground network: atom id " + std::to_string(id));
                 if (static_cast<size_t>(id) >= net.is_query.size())
                   net.is_query.resize(std::max<size_t>(static_cast<size_t>(id) + 1, net.is_query.size() * 2), 0);
                 net.num_atoms = std::max(net.num_atoms, id);
                 net.is_query[id] = f[1].first[0] != 0;
               }
               first = false;
             });
  net.is_query.resize(static_cast<size_t>(net.num_atoms) + 1);
}

// Joins the ranges' clauses, in order, into `cs`: one range after another,
// each copied on OpenMP threads and its memory given back before the next,
// so that the host holds the network once and one range more, not twice
// (cs's HostArrays are not written until copied into: 28 GB at 10^9
// clauses, issue #45).
void join_ranges(std::vector<ClauseSet>& parts, ClauseSet& cs) {
  const size_t k = parts.size();
  std::vector<size_t> lit_at(k + 1, 0), cl_at(k + 1, 0);
  for (size_t i = 0; i < k; ++i) {
    lit_at[i + 1] = lit_at[i] + parts[i].lits.size();
    cl_at[i + 1] = cl_at[i] + parts[i].weights.size();
  }
  cs.lits.resize(lit_at[k]);
  cs.weights.resize(cl_at[k]);
  cs.offsets.resize(cl_at[k] + 1);
  cs.offsets[0] = 0;
  constexpr int64_t kBlock = int64_t{1} << 20;
  for (size_t i = 0; i < k; ++i) {
    ClauseSet& p = parts[i];
    const int64_t nl = static_cast<int64_t>(p.lits.size()), nc = static_cast<int64_t>(p.weights.size());
    const int64_t base = static_cast<int64_t>(lit_at[i]);
    int32_t* lits = cs.lits.data() + lit_at[i];
    double* weights = cs.weights.data() + cl_at[i];
    int64_t* offsets = cs.offsets.data() + cl_at[i];
#pragma omp parallel for schedule(static) if (nl > kBlock)
    for (int64_t b = 0; b < (nl + kBlock - 1) / kBlock; ++b)
      std::copy(p.lits.begin() + b * kBlock, p.lits.begin() + std::min(nl, (b + 1) * kBlock), lits + b * kBlock);
#pragma omp parallel for schedule(static) if (nc > kBlock)
    for (int64_t c = 0; c < nc; ++c) {
      weights[c] = p.weights[c];
      offsets[c + 1] = base + p.offsets[c + 1];
    }
    p = ClauseSet();  // the range's memory back before the next is copied
  }
}

// The network over `streams` connections: the atoms on `c`, the clause
// chunks [lo, hi] in a range per helper connection, all in one snapshot
// that `c` exports (a network that a re-grounding replaces mid-read is
// never mixed with the new one).  Returns the bytes the helpers received.
int64_t read_ranges(Conn& c, const std::string& s, bool codes, const std::string& dsn, int streams, int64_t lo,
                    int64_t hi, Network& net) {
  int64_t helpers = 0;
  {
    // This transaction waits, idle, while its helpers read: no limit on that.
    c.exec("SET LOCAL idle_in_transaction_session_timeout = 0");
    const std::string snap = c.exec("SELECT pg_export_snapshot()").get(0, 0);
    std::vector<ClauseSet> parts(static_cast<size_t>(streams));
    std::vector<std::exception_ptr> errors(static_cast<size_t>(streams));
    std::vector<int64_t> bytes(static_cast<size_t>(streams), 0);
    std::vector<std::thread> ts;
    const int64_t span = hi - lo + 1;
    for (int k = 0; k < streams; ++k) {
      const int64_t a = lo + span * k / streams, b = lo + span * (k + 1) / streams - 1;  // [a, b]
      ts.emplace_back([&, k, a, b] {
        try {
          Conn h(dsn);
          h.pin_search_path();
          h.limit_idle_transactions(WorkerOptions::kIdleTransactionFloorSeconds);
          h.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
          h.exec("SET TRANSACTION SNAPSHOT " + h.quote_literal(snap));
          read_chunks(h, chunk_sql(s, codes, " WHERE chunk BETWEEN " + std::to_string(a) + " AND " + std::to_string(b)),
                      codes, parts[k]);
          bytes[k] = h.copied_out();
          h.exec("COMMIT");
        } catch (...) {
          errors[k] = std::current_exception();
        }
      });
    }
    std::exception_ptr atoms_error;
    try {
      read_atoms(c, s, net);
    } catch (...) {
      atoms_error = std::current_exception();
    }
    for (auto& t : ts) t.join();
    if (atoms_error) std::rethrow_exception(atoms_error);
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    join_ranges(parts, net.clauses);
    for (int64_t x : bytes) helpers += x;
  }
  return helpers;
}

Network read_checked(Conn& c, const std::string& schema, const std::string* dsn, int streams, ReadStats* stats) {
  Network net;
  const std::string s = c.quote_ident(schema);
  ClauseSet& cs = net.clauses;
  const bool codes = has_codes(c, s);
  int64_t chunks = 0, lo = 0, hi = -1;
  if (dsn && streams > 1) {
    // Chunks are numbered 0, 1, ... (the primary key's index answers min
    // and max; count(*) read the whole table, 2 GB at 10^8 clauses).
    Result r = c.exec("SELECT min(chunk), max(chunk) FROM " + s + "._clauses");
    if (!r.null(0, 0)) {
      lo = r.num(0, 0);
      hi = r.num(0, 1);
      chunks = hi - lo + 1;
    }
  }
  // At least a chunk per connection.
  streams = static_cast<int>(std::min<int64_t>(streams, chunks));
  if (streams > 1) {
    const int64_t bytes0 = c.copied_out();
    try {
      const int64_t helpers = read_ranges(c, s, codes, *dsn, streams, lo, hi, net);
      if (stats) {
        stats->connections = streams;
        stats->bytes = c.copied_out() - bytes0 + helpers;
      }
      return net;
    } catch (const DbError& e) {
      // A helper that could not connect (max_connections, a role's
      // connection limit) or whose read failed: the network is read again
      // over one connection, which reports its own error if it has one.
      if (stats) stats->fallback = e.what();
      net = Network();
    }
  }
  if (stats) stats->connections = 1;
  const int64_t before = c.copied_out();
  read_atoms(c, s, net);
  read_chunks(c, chunk_sql(s, codes, ""), codes, cs);
  if (cs.offsets.size() != cs.weights.size() + 1) throw DbError("corrupt ground network: offsets do not match weights");
  if (stats) stats->bytes = c.copied_out() - before;
  return net;
}

}  // namespace

std::vector<uint8_t> read_warm_start(Conn& c, const std::string& program, const std::string& schema,
                                     const std::string& net_oid, int32_t num_atoms) {
  const std::string warm = c.quote_ident(schema) + "._warm";
  if (c.exec("SELECT to_regclass($1) IS NULL", {warm}).get(0, 0) == "t") return {};
  return trusted_read(c, program, schema, {"_atoms", "_warm"}, [&]() -> std::vector<uint8_t> {
    Result oid = c.exec("SELECT to_regclass($1)::oid", {c.quote_ident(schema) + "._atoms"});
    if (oid.rows() != 1 || oid.null(0, 0) || oid.get(0, 0) != net_oid) return {};  // grounded again since
    std::vector<uint8_t> t(static_cast<size_t>(num_atoms) + 1, 0);
    Result r = c.exec("SELECT atom FROM " + warm);
    for (int i = 0; i < r.rows(); ++i) {
      const long long a = r.num(i, 0);
      if (a >= 1 && a <= num_atoms) t[static_cast<size_t>(a)] = 1;
    }
    return t;
  });
}

LiveChange read_live_change(Conn& c, const std::string& program, const std::string& schema,
                            const std::string& net_oid, int32_t num_atoms, int64_t job_id) {
  const std::string s = c.quote_ident(schema);
  Result have = c.exec("SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL, to_regclass($3) IS NOT NULL",
                       {s + "._carried", s + "._map_info", s + "._marginal"});
  if (have.get(0, 0) != "t") return {};
  std::vector<std::string> tables = {"_atoms", "_carried"};
  if (have.get(0, 1) == "t") tables.push_back("_map_info");
  if (have.get(0, 2) == "t") tables.push_back("_marginal");
  return trusted_read(c, program, schema, tables, [&]() -> LiveChange {
    LiveChange l;
    Result oid = c.exec("SELECT to_regclass($1)::oid", {s + "._atoms"});
    if (oid.rows() != 1 || oid.null(0, 0) || oid.get(0, 0) != net_oid) return l;  // grounded again since
    // The options of the jobs that made the carried answers, against this job's.
    Result info = c.exec(
        "SELECT x->'map'->>'cost', x->'map'->>'bound', x->'map'->>'optimal', x->>'touched_atoms', "
        "jsonb_typeof(x->'map') = 'object', jsonb_typeof(x->'marginals') = 'object', "
        "coalesce((SELECT o.options FROM mln.jobs o WHERE o.id = (x->'map'->>'job')::int8) = j.options, false), "
        "coalesce((SELECT o.options FROM mln.jobs o WHERE o.id = (x->'marginals'->>'job')::int8) = j.options, false) "
        "FROM mln.programs p JOIN mln.jobs j ON j.id = $2, LATERAL (SELECT p.ground_stats->'carried') y(x) "
        "WHERE p.name = $1 AND jsonb_typeof(x) = 'object'",
        {program, std::to_string(job_id)});
    if (info.rows() != 1) return l;
    const bool map_answered = have.get(0, 1) == "t" && c.exec("SELECT EXISTS (SELECT 1 FROM " + s + "._map_info)").get(0, 0) == "t";
    const bool marginals_answered =
        have.get(0, 2) == "t" && c.exec("SELECT EXISTS (SELECT 1 FROM " + s + "._marginal)").get(0, 0) == "t";
    l.have_map = info.get(0, 4) == "t" && !map_answered;
    l.map_same = l.have_map && info.get(0, 6) == "t";
    l.have_marginals = info.get(0, 5) == "t" && !marginals_answered && info.get(0, 7) == "t";
    if (!l.have_map && !l.have_marginals) return l;
    l.cost = info.dbl(0, 0);
    l.have_bound = !info.null(0, 1);
    l.bound = info.dbl(0, 1);
    l.optimal = info.get(0, 2) == "true";
    l.touched_known = !info.null(0, 3);
    l.truth.assign(static_cast<size_t>(num_atoms) + 1, 0);
    l.prob.assign(static_cast<size_t>(num_atoms) + 1, std::numeric_limits<double>::quiet_NaN());
    Result r = c.exec("SELECT atom, truth, touched, probability FROM " + s + "._carried");
    for (int i = 0; i < r.rows(); ++i) {
      const long long a = r.num(i, 0);
      if (a < 1 || a > num_atoms) throw DbError("corrupt " + s + "._carried: atom " + std::to_string(a) + " is not in the network");
      if (r.get(i, 1) == "t") l.truth[static_cast<size_t>(a)] = 1;
      if (r.get(i, 2) == "t") l.touched.push_back(static_cast<int32_t>(a));
      if (!r.null(i, 3)) l.prob[static_cast<size_t>(a)] = r.dbl(i, 3);
    }
    if (!l.have_map) l.truth.clear();
    if (!l.have_marginals) l.prob.clear();
    return l;
  });
}

int read_streams_default() {
  if (const char* e = std::getenv("MLN_READ_STREAMS")) return std::clamp(std::atoi(e), 1, 32);
  return static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency() / 2, 1, 8));
}

Network read_network(Conn& c, const std::string& program, const std::string& schema, const std::string* dsn,
                     int streams, ReadStats* stats) {
  // Several connections only from a transaction of its own (the snapshot
  // it exports is the helpers').
  const bool own = PQtransactionStatus(c.raw()) == PQTRANS_IDLE;
  return trusted_read(c, program, schema, {"_atoms", "_clauses"}, [&] {
    return read_checked(c, schema, own ? dsn : nullptr, streams, stats);
  });
}

}  // namespace mln::worker
