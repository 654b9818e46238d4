// The strata of a Datalog program, in order, each to its fixpoint
// (docs/datalog.md).  Within a stratum, semi-naive: the rules without a
// positive atom of the stratum run once; then each iteration runs every
// other rule once per positive atom of the stratum, that atom reading the
// previous iteration's new rows (delta) and the rest the full relations, and
// keeps the rows not seen before (the engine's difference, which also drops
// duplicates).  Negated atoms read lower strata only (parse() checks it),
// whose relations are final.
#include <string>

#include "ground/datalog_eval.hpp"

namespace mln::ground::datalog {

std::vector<int> detail::recursive_atoms(const dl::Rule& r, const std::vector<char>& in_s) {
  std::vector<int> out;
  for (size_t k = 0; k < r.pos.size(); ++k)
    if (in_s[r.pos[k].rel]) out.push_back(static_cast<int>(k));
  return out;
}

namespace {

// new rows of each relation of the stratum, appended per head.
void add(gpu::Engine& eng, std::vector<gpu::Relation>& acc, int rel, const gpu::Relation& rows) {
  if (rows.rows() == 0) return;
  acc[rel] = acc[rel].impl() ? eng.union_all(acc[rel], rows) : rows;
}

void check_limit(const EvalOptions& o, const std::vector<gpu::Relation>& full, const std::vector<int>& rels,
                 uint64_t base_rows) {
  if (!o.max_rows) return;
  uint64_t total = base_rows;
  for (int r : rels) total += full[r].rows();
  if (total > o.max_rows)
    throw LimitExceeded("the derived relations hold " + std::to_string(total) + " rows, above max_rows (" +
                        std::to_string(o.max_rows) + ")");
}

}  // namespace

uint64_t detail::evaluate_stratum(gpu::Engine& eng, const dl::Program& p, int s, std::vector<gpu::Relation>& full,
                                  const EvalOptions& o, uint64_t base_rows, EvalStats* st) {
  const uint64_t split_rows = split_rows_for(o);
  const std::vector<int>& rels = p.strata[s];
  std::vector<char> in_s(p.rels.size(), 0);
  for (int r : rels) in_s[r] = 1, full[r] = eng.empty(p.rels[r].arity);
  std::vector<int> recursive;
  std::vector<gpu::Relation> acc(p.rels.size()), delta(p.rels.size());
  for (int ri : p.stratum_rules[s]) {
    const dl::Rule& rule = p.rules[ri];
    if (!recursive_atoms(rule, in_s).empty()) {
      recursive.push_back(ri);
      continue;
    }
    add(eng, acc, rule.head.rel, eval_rule(eng, p, rule, full, delta, -1, o.max_rows, split_rows));
  }
  uint64_t fresh = 0;
  for (int r : rels) {
    if (acc[r].impl()) full[r] = eng.distinct(acc[r]);
    delta[r] = full[r];
    fresh += full[r].rows();
  }
  check_limit(o, full, rels, base_rows);
  if (o.progress) o.progress(s, 0, fresh);
  for (int it = 1; fresh > 0 && !recursive.empty(); ++it) {
    std::vector<gpu::Relation> next(p.rels.size());
    for (int ri : recursive) {
      const dl::Rule& rule = p.rules[ri];
      for (int k : recursive_atoms(rule, in_s)) {
        if (delta[rule.pos[k].rel].rows() == 0) continue;
        add(eng, next, rule.head.rel, eval_rule(eng, p, rule, full, delta, k, o.max_rows, split_rows));
      }
    }
    fresh = 0;
    for (int r : rels) {  // every rule above read the same full and delta
      delta[r] = next[r].impl() ? eng.difference(next[r], full[r]) : eng.empty(p.rels[r].arity);
      if (delta[r].rows() > 0) full[r] = eng.union_all(full[r], delta[r]);
      fresh += delta[r].rows();
    }
    if (st) ++st->iterations;
    check_limit(o, full, rels, base_rows);
    if (o.progress) o.progress(s, it, fresh);
  }
  uint64_t rows = 0;
  for (int r : rels) rows += full[r].rows();
  return rows;
}

std::vector<gpu::Relation> evaluate(gpu::Engine& eng, const dl::Program& p, std::vector<gpu::Relation> inputs,
                                    const EvalOptions& opts, EvalStats* stats) {
  std::vector<gpu::Relation> full = std::move(inputs);
  full.resize(p.rels.size());
  for (size_t r = 0; r < p.rels.size(); ++r)
    if (p.rels[r].derived) full[r] = eng.empty(p.rels[r].arity);
  uint64_t derived_rows = 0;  // rows of the derived relations of finished strata
  for (size_t s = 0; s < p.strata.size(); ++s)
    derived_rows += detail::evaluate_stratum(eng, p, static_cast<int>(s), full, opts, derived_rows, stats);
  return full;
}

}  // namespace mln::ground::datalog
