// Writing a finished job's answers: the MAP state into _map, the marginal
// probabilities into _marginal (both by COPY, primary key built after the
// rows), the decoded result tables, and the job's final row, in one
// transaction.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

#include "core/base/run_control.hpp"
#include "worker/job.hpp"
#include "worker/pq.hpp"
#include "worker/trusted.hpp"

namespace mln::worker {

std::string float8_text(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

namespace {

// The union of two device_used strings ("cpu", "gpu", "cpu+gpu").
std::string merge_devices(const std::string& a, const std::string& b) {
  if (a.empty() || a == b) return b.empty() ? a : b;
  if (b.empty()) return a;
  return solver::device_used_of(a + "," + b);
}

// Replaces a result table's rows (column atom its primary key) by COPY from
// `source`.  When this role may alter the table, the key is rebuilt after
// the rows: one sorted index build instead of an insertion per row (RC
// 10^5: 0.73 s -> 0.39 s).  A worker of role mln_worker does not own the
// program owner's _map: it copies with the key in place.
// The table is checked first (worker/trusted.hpp): its TRUNCATE and COPY
// run with the worker's rights.
template <typename Source>
void replace_rows(Conn& c, const Job& job, const std::string& name, const std::string& pkey, const std::string& cols,
                  Source&& source) {
  check_trusted_tables(c, job.program, job.schema, {name}, true);
  const std::string table = c.quote_ident(job.schema) + "." + c.quote_ident(name);
  c.exec("TRUNCATE " + table);
  Result own = c.exec("SELECT pg_has_role(relowner, 'USAGE') FROM pg_class WHERE oid = $1::regclass", {table});
  const bool rebuild = own.rows() == 1 && own.get(0, 0) == "t";
  if (rebuild) c.exec("ALTER TABLE " + table + " DROP CONSTRAINT IF EXISTS " + pkey);
  c.copy_in("COPY " + table + " " + cols + " FROM STDIN", std::forward<Source>(source));
  if (rebuild) c.exec("ALTER TABLE " + table + " ADD PRIMARY KEY (atom)");
}

// Replaces the one row of info table `name` (_map_info, _marginal_info:
// which job wrote the answer, and how good it is) where the network has
// one (grounded since 0.17.0); checked first like every result table.
void replace_info(Conn& c, const Job& job, const std::string& name, const std::vector<std::string>& values) {
  const std::string t = c.quote_ident(job.schema) + "." + c.quote_ident(name);
  if (c.exec("SELECT to_regclass($1) IS NOT NULL", {t}).get(0, 0) != "t") return;
  check_trusted_tables(c, job.program, job.schema, {name}, true);
  c.exec("DELETE FROM " + t);
  std::string ps;
  for (size_t i = 1; i <= values.size(); ++i) ps += (i > 1 ? ", $" : "$") + std::to_string(i);
  c.exec("INSERT INTO " + t + " VALUES (" + ps + ")", values);
}

// The MAP state into _map, then map_result.  Only the atoms that are true
// get a row: map_result and mln.map read an atom without one as false (RC
// at 10^5 papers: 228k rows instead of 990k).  The hidden atoms that are
// true are kept too (map_result reads the query atoms only): a live
// re-grounding carries the whole state to the next job
// (extension/pg/live_ground.hpp), with the cost and bound in _map_info
// (absent in a network grounded before it).
void write_map(Conn& c, const Job& job, const Network& net, const JobOutcome& out) {
  const solver::SolveResult& res = out.map;
  int32_t next = 1;
  replace_rows(c, job, "_map", "_map_pkey", "(atom, truth)", [&](std::string& chunk) {
    for (; next <= net.num_atoms && chunk.size() < (1 << 20); ++next) {
      if (!res.truth[next]) continue;
      chunk += std::to_string(next);
      chunk += "\tt\n";
    }
    return next <= net.num_atoms;
  });
  replace_info(c, job, "_map_info",
               {std::to_string(job.id), float8_text(res.cost), float8_text(res.bound), res.optimal ? "true" : "false"});
  c.exec("SELECT mln._materialize_map($1), mln._share_results($1)", {job.program});
}

// P(true) of every atom that was solved into _marginal (created here when
// absent: mln.ground drops it with the network), the job into
// _marginal_info (a network grounded since 0.17.0), then marginal_result.
// Atoms of components that were not solved (NaN) get no row.
void write_marginal(Conn& c, const std::string& s, const Job& job, const Network& net,
                    const solver::MarginalResult& res) {
  c.exec("SET LOCAL client_min_messages = warning");  // no NOTICE for an existing table
  c.exec("CREATE TABLE IF NOT EXISTS " + s + "._marginal (atom int4 PRIMARY KEY, probability float8 NOT NULL)");
  const int32_t n = std::min<int32_t>(net.num_atoms, static_cast<int32_t>(res.prob.size()) - 1);
  int32_t next = 1;
  replace_rows(c, job, "_marginal", "_marginal_pkey", "(atom, probability)", [&](std::string& chunk) {
    for (; next <= n && chunk.size() < (1 << 20); ++next) {
      const double p = res.prob[next];
      if (std::isnan(p)) continue;
      chunk += std::to_string(next);
      chunk += '\t';
      chunk += float8_text(std::clamp(p, 0.0, 1.0));
      chunk += '\n';
    }
    return next <= n;
  });
  replace_info(c, job, "_marginal_info", {std::to_string(job.id)});
  c.exec("SELECT mln._materialize_marginal($1), mln._share_results($1)", {job.program});
}

}  // namespace

bool catalog_has_column(Conn& c, const std::string& table, const std::string& column) {
  return c.exec("SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = ('mln.' || quote_ident($1))::regclass "
                "AND attname = $2 AND NOT attisdropped)",
                {table, column})
             .get(0, 0) == "t";
}

std::string pg_array(const std::vector<std::string>& v) {
  std::string o = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    o += i ? ",\"" : "\"";
    for (char ch : v[i]) {
      if (ch == '"' || ch == '\\') o += '\\';
      o += ch;
    }
    o += "\"";
  }
  return o + "}";
}

std::string network_oid(Conn& c, const std::string& schema) {
  Result r = c.exec("SELECT to_regclass($1)::oid", {c.quote_ident(schema) + "._atoms"});
  return r.rows() == 1 && !r.null(0, 0) ? r.get(0, 0) : "";
}

std::string finish_owned(Conn& c, const Job& job, const std::string& me, const std::string& net_oid,
                         const std::function<void()>& write) {
  const std::string id = std::to_string(job.id);
  c.exec("BEGIN");
  try {
    Result owner = c.exec("SELECT status FROM mln.jobs WHERE id = $1 AND worker = $2 FOR UPDATE", {id, me});
    if (owner.rows() == 0 || owner.get(0, 0) != "running") {
      c.exec("ROLLBACK");
      return "the job is no longer this worker's (cancelled, or taken over)";
    }
    // Lock the program's row: mln.ground updates it, so a re-grounding
    // cannot slip in between this check and the writes.
    c.exec("SELECT 1 FROM mln.programs WHERE name = $1 FOR UPDATE", {job.program});
    // A rule learning job read the evidence, and a problog job its own
    // ground program, not the network: a grounding meanwhile leaves their
    // results whole.
    if (!job.wants_rules() && !job.wants_problog() && network_oid(c, job.schema) != net_oid) {
      const std::string why = "program \"" + job.program + "\" was grounded again while the job ran; run it again";
      c.exec("UPDATE mln.jobs SET status = 'failed', error = $2, finished_at = clock_timestamp() WHERE id = $1",
             {id, why});
      c.exec("COMMIT");
      return why;
    }
    write();
    c.exec("COMMIT");
    return "";
  } catch (...) {
    try { c.exec("ROLLBACK"); } catch (...) {}
    throw;
  }
}

std::string finish_job(Conn& c, const Job& job, const std::string& me, const std::string& net_oid, const Network& net,
                       const JobOutcome& out) {
  const std::string id = std::to_string(job.id);
  return finish_owned(c, job, me, net_oid, [&] {
    const std::string s = c.quote_ident(job.schema);
    if (out.have_map) write_map(c, job, net, out);
    if (out.have_marginal) write_marginal(c, s, job, net, out.marginal);

    const solver::SolveResult& m = out.map;
    const solver::MarginalResult& g = out.marginal;
    std::vector<std::string> warnings;
    if (out.have_map) warnings = m.warnings;
    if (out.have_marginal) warnings.insert(warnings.end(), g.warnings.begin(), g.warnings.end());
    const double seconds = (out.have_map ? m.seconds : 0) + (out.have_marginal ? g.seconds : 0);
    const int64_t flips = (out.have_map ? m.flips : 0) + (out.have_marginal ? g.flips : 0);
    const std::string device =
        merge_devices(out.have_map ? m.device_used : "", out.have_marginal ? g.device_used : "");
    const size_t gpu_mem = std::max(out.have_map ? m.gpu_memory_peak_bytes : 0,
                                    out.have_marginal ? g.gpu_memory_peak_bytes : 0);
    const int components = out.have_map ? m.components : g.components;
    // Samples per second, per component (the unit of `samples`).
    const double sps = out.have_marginal && g.seconds > 0 ? static_cast<double>(g.samples) / g.seconds : 0;
    std::vector<std::string> p{id,
                               out.have_map ? float8_text(m.cost) : "",
                               out.have_map ? std::to_string(m.hard_violated) : "",
                               std::to_string(flips),
                               float8_text(seconds),
                               device,
                               std::to_string(net.num_atoms),
                               std::to_string(net.clauses.size()),
                               std::to_string(components),
                               pg_array(warnings),
                               std::to_string(gpu_mem),
                               out.have_marginal ? std::to_string(g.samples) : "",
                               out.have_marginal ? float8_text(sps) : "",
                               out.have_marginal ? float8_text(g.average_cost) : "",
                               out.have_marginal ? std::to_string(job.marginal.samples) : "",
                               out.have_map ? float8_text(m.bound) : "",
                               out.have_map ? (m.optimal ? "true" : "false") : "",
                               out.have_map ? m.solver_used : ""};
    std::vector<bool> nulls(p.size(), false);
    for (size_t i : {1, 2, 15, 16, 17}) nulls[i] = !out.have_map;
    for (size_t i : {11, 12, 13, 14}) nulls[i] = !out.have_marginal;
    c.exec_n(
        "UPDATE mln.jobs SET status = 'done', finished_at = clock_timestamp(), best_cost = $2::float8, "
        "hard_violated = $3::bigint, flips = $4::bigint, seconds = $5::float8, device = $6, atoms = $7::bigint, "
        "clauses = $8::bigint, components = $9::int, warnings = $10::text[], gpu_memory_bytes = $11::bigint, "
        "flips_per_s = CASE WHEN $5::float8 > 0 THEN $4::bigint / $5::float8 END, "
        "samples = $12::bigint, samples_per_s = $13::float8, average_cost = $14::float8, "
        "samples_total = coalesce(samples_total, $15::bigint), bound = $16::float8, optimal = $17::boolean, "
        "solver = $18 WHERE id = $1",
        p, nulls);
    // How the MAP answer was reached (pg_mln 0.6.0's columns; an older
    // database has none).
    if (out.have_map && catalog_has_column(c, "jobs", "stop_reason"))
      c.exec("UPDATE mln.jobs SET first_answer_seconds = $2::float8, bound_seconds = $3::float8, stop_reason = $4 "
             "WHERE id = $1",
             {id, float8_text(m.first_answer_s), float8_text(m.bound_s), m.stop_reason});
  });
}

}  // namespace mln::worker
