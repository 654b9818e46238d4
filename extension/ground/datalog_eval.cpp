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

class Evaluator {
 public:
  Evaluator(gpu::Engine& eng, const dl::Program& p, const EvalOptions& o, EvalStats* st)
      : eng_(eng), p_(p), o_(o), st_(st), split_rows_(split_rows_for(o)) {}

  std::vector<gpu::Relation> run(std::vector<gpu::Relation> inputs) {
    full_ = std::move(inputs);
    full_.resize(p_.rels.size());
    delta_.assign(p_.rels.size(), gpu::Relation());
    for (size_t r = 0; r < p_.rels.size(); ++r)
      if (p_.rels[r].derived) full_[r] = eng_.empty(p_.rels[r].arity);
    for (size_t s = 0; s < p_.strata.size(); ++s) stratum(static_cast<int>(s));
    return std::move(full_);
  }

 private:
  gpu::Engine& eng_;
  const dl::Program& p_;
  const EvalOptions& o_;
  EvalStats* st_;
  const uint64_t split_rows_;
  std::vector<gpu::Relation> full_, delta_;
  uint64_t derived_rows_ = 0;  // rows of the derived relations of finished strata

  // new rows of each relation of the stratum, appended per head.
  void add(std::vector<gpu::Relation>& acc, int rel, const gpu::Relation& rows) {
    if (rows.rows() == 0) return;
    acc[rel] = acc[rel].impl() ? eng_.union_all(acc[rel], rows) : rows;
  }

  void check_limit(const std::vector<int>& rels) const {
    if (!o_.max_rows) return;
    uint64_t total = derived_rows_;
    for (int r : rels) total += full_[r].rows();
    if (total > o_.max_rows)
      throw LimitExceeded("the derived relations hold " + std::to_string(total) + " rows, above max_rows (" +
                          std::to_string(o_.max_rows) + ")");
  }

  void stratum(int s) {
    const std::vector<int>& rels = p_.strata[s];
    std::vector<char> in_s(p_.rels.size(), 0);
    for (int r : rels) in_s[r] = 1;
    std::vector<int> recursive;
    std::vector<gpu::Relation> acc(p_.rels.size());
    for (int ri : p_.stratum_rules[s]) {
      const dl::Rule& rule = p_.rules[ri];
      if (!detail::recursive_atoms(rule, in_s).empty()) {
        recursive.push_back(ri);
        continue;
      }
      add(acc, rule.head.rel, detail::eval_rule(eng_, p_, rule, full_, delta_, -1, o_.max_rows, split_rows_));
    }
    uint64_t fresh = 0;
    for (int r : rels) {
      if (acc[r].impl()) full_[r] = eng_.distinct(acc[r]);
      delta_[r] = full_[r];
      fresh += full_[r].rows();
    }
    check_limit(rels);
    if (o_.progress) o_.progress(s, 0, fresh);
    for (int it = 1; fresh > 0 && !recursive.empty(); ++it) {
      std::vector<gpu::Relation> next(p_.rels.size());
      for (int ri : recursive) {
        const dl::Rule& rule = p_.rules[ri];
        for (int k : detail::recursive_atoms(rule, in_s)) {
          if (delta_[rule.pos[k].rel].rows() == 0) continue;
          add(next, rule.head.rel, detail::eval_rule(eng_, p_, rule, full_, delta_, k, o_.max_rows, split_rows_));
        }
      }
      fresh = 0;
      for (int r : rels) {  // every rule above read the same full and delta
        delta_[r] = next[r].impl() ? eng_.difference(next[r], full_[r]) : eng_.empty(p_.rels[r].arity);
        if (delta_[r].rows() > 0) full_[r] = eng_.union_all(full_[r], delta_[r]);
        fresh += delta_[r].rows();
      }
      if (st_) ++st_->iterations;
      check_limit(rels);
      if (o_.progress) o_.progress(s, it, fresh);
    }
    for (int r : rels) {
      derived_rows_ += full_[r].rows();
      delta_[r] = gpu::Relation();  // lower strata are read in full only
    }
  }
};

}  // namespace

std::vector<gpu::Relation> evaluate(gpu::Engine& eng, const dl::Program& p, std::vector<gpu::Relation> inputs,
                                    const EvalOptions& opts, EvalStats* stats) {
  return Evaluator(eng, p, opts, stats).run(std::move(inputs));
}

}  // namespace mln::ground::datalog
