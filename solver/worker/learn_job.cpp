// Learning jobs (task 'learn'): the learning tables mln._ground_learning
// wrote (_learn_rules, _learn_clauses, _learn_world) next to the network,
// the job's options, and the finished job's weights: every iteration into
// mln.learn_iterations and the result into mln.clauses (through
// mln._apply_learned_weights), in the transaction that marks the job done.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "worker/job.hpp"
#include "worker/pq.hpp"
#include "worker/trusted.hpp"
#include "worker/worker.hpp"

namespace mln::worker {

namespace {

std::string float8_array(const std::vector<double>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + float8_text(v[i]);
  return s + "}";
}

std::string int4_array(const std::vector<int32_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "}";
}

// The job's warnings: the learner's, and a summary of the steps the trust
// region took back with the last one's reason (each iteration's own reason
// is its row's note in mln.learn_iterations).
std::vector<std::string> learn_warnings(const solver::LearnResult& res) {
  std::vector<std::string> w = res.warnings;
  std::string its;
  const solver::LearnIteration* last = nullptr;
  size_t rejected = 0;
  for (const auto& it : res.trace)
    if (!it.accepted && !it.note.empty()) {
      its += (rejected++ ? ", " : "") + std::to_string(it.iteration);
      last = &it;
    }
  if (last && rejected < res.trace.size())
    w.push_back(std::to_string(rejected) + " of " + std::to_string(res.trace.size()) +
                " steps were taken back by the trust region (iterations " + its + "); iteration " +
                std::to_string(last->iteration) + ": " + last->note);
  return w;
}

solver::LearnNetwork read_learn_tables(Conn& c, const std::string& schema, Network net, Job& job) {
  solver::LearnNetwork ln;
  const std::string s = c.quote_ident(schema);
  Result rules = c.exec("SELECT idx, weight FROM " + s + "._learn_rules ORDER BY pos");
  ln.num_rules = static_cast<int32_t>(rules.rows());
  job.learn_clauses.clear();
  std::vector<double> w0;
  for (int i = 0; i < rules.rows(); ++i) {
    job.learn_clauses.push_back(static_cast<int32_t>(rules.num(i, 0)));
    w0.push_back(rules.dbl(i, 1));
  }
  if (job.learn.init == options::LearnInit::kProgram) job.learn.initial_weights = w0;
  std::vector<std::pair<const char*, int32_t>> f;
  bool first = true;
  std::vector<int32_t> offs, orig;
  std::vector<double> base;
  c.copy_out("COPY (SELECT mln._array_le(base), mln._array_le(origin_offsets), mln._array_le(origins) FROM " + s +
                 "._learn_clauses ORDER BY chunk) TO STDOUT (FORMAT binary)",
             [&](const char* data, size_t len) {
               if (binary::parse_row(data, len, first, f)) {
                 if (f.size() != 3 || f[0].second < 0 || f[1].second < 0 || f[2].second < 0)
                   throw DbError("corrupt learning tables: a chunk row with NULLs");
                 offs.clear();
                 orig.clear();
                 const size_t before = ln.base_weight.size();
                 binary::le_float8s(f[0].first, f[0].second, ln.base_weight);
                 binary::le_int4s(f[1].first, f[1].second, offs);
                 binary::le_int4s(f[2].first, f[2].second, orig);
                 if (offs.size() != ln.base_weight.size() - before + 1 || offs.back() != static_cast<int32_t>(orig.size()))
                   throw DbError("corrupt learning tables: origins do not match their chunk");
                 for (size_t i = 1; i < offs.size(); ++i) {
                   for (int32_t k = offs[i - 1]; k < offs[i]; ++k) {
                     const int32_t o = orig[k];
                     if (o == 0 || std::abs(o) > ln.num_rules) throw DbError("corrupt learning tables: origin out of range");
                     ln.origin_rule.push_back(std::abs(o) - 1);
                     ln.origin_coef.push_back(o > 0 ? 1.0 : -1.0);
                   }
                   ln.origin_off.push_back(static_cast<int64_t>(ln.origin_rule.size()));
                 }
               }
               first = false;
             });
  if (ln.base_weight.size() != net.clauses.size())
    throw DbError("the learning tables do not match the ground network (ground the program again with mln.learn_weights)");
  ln.truth.assign(static_cast<size_t>(net.num_atoms) + 1, 0);
  Result world = c.exec("SELECT atom FROM " + s + "._learn_world");
  for (int i = 0; i < world.rows(); ++i) {
    const int64_t a = world.num(i, 0);
    if (a >= 1 && a <= net.num_atoms) ln.truth[a] = 1;
  }
  ln.net = std::move(net);
  return ln;
}

}  // namespace

solver::LearnNetwork read_learn_network(Conn& c, const std::string& schema, Network net, Job& job) {
  return trusted_read(c, job.program, schema, {"_learn_rules", "_learn_clauses", "_learn_world"},
                      [&] { return read_learn_tables(c, schema, std::move(net), job); });
}

std::string finish_learn_job(Conn& c, const Job& job, const std::string& me, const std::string& net_oid,
                             const solver::LearnResult& res) {
  const std::string id = std::to_string(job.id);
  return finish_owned(c, job, me, net_oid, [&] {
    const std::string clauses = int4_array(job.learn_clauses);
    c.exec("DELETE FROM mln.learn_iterations WHERE job = $1", {id});  // an earlier attempt's
    c.exec("INSERT INTO mln.learn_iterations(job, program, iteration, clauses, weights, objective, accepted) "
           "VALUES ($1, $2, 0, $3::int[], $4::float8[], 0, true)",
           {id, job.program, clauses, float8_array(res.initial_weights)});
    // With why each step was taken or taken back where the database has
    // the column (pg_mln 0.6.0's note; an older one keeps the flag alone).
    const bool has_note = catalog_has_column(c, "learn_iterations", "note");
    const std::string insert =
        std::string("INSERT INTO mln.learn_iterations(job, program, iteration, clauses, weights, objective, accepted") +
        (has_note ? ", note) VALUES ($1, $2, $3, $4::int[], $5::float8[], $6, $7, nullif($8, ''))"
                  : ") VALUES ($1, $2, $3, $4::int[], $5::float8[], $6, $7)");
    for (const auto& it : res.trace) {
      std::vector<std::string> p{id, job.program, std::to_string(it.iteration), clauses, float8_array(it.weights),
                                 float8_text(it.objective), it.accepted ? "true" : "false"};
      if (has_note) p.push_back(it.note);
      c.exec(insert, p);
    }
    c.exec("SELECT mln._apply_learned_weights($1, $2, $3::int[], $4::float8[])",
           {job.program, id, clauses, float8_array(res.weights)});
    const double objective = res.trace.empty() ? 0 : res.trace.back().objective;
    c.exec(
        "UPDATE mln.jobs SET status = 'done', finished_at = clock_timestamp(), seconds = $2::float8, device = $3, "
        "iterations = $4::int, objective = $5::float8, samples = $6::bigint, atoms = $7::bigint, "
        "clauses = $8::bigint, warnings = $9::text[], lease_until = NULL WHERE id = $1",
        {id, float8_text(res.seconds), res.device_used, std::to_string(res.iterations), float8_text(objective),
         std::to_string(res.samples), std::to_string(job.learn_atoms), std::to_string(job.learn_ground_clauses),
         pg_array(learn_warnings(res))});
  });
}

}  // namespace mln::worker
