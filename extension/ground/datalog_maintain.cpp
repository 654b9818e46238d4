// DRed maintenance of an evaluated Datalog program (datalog_maintain.hpp).
// Each step is eval_rule over a choice of full relations (old state, new
// state, or the old state less the over-deleted rows) and one atom reading a
// delta; a rule variant turns a negated atom into the delta atom (a row
// inserted into a negated relation removes derivations, a deleted one adds
// them), or adds the head as the delta atom (re-derivation: only the rows
// that were over-deleted are tried).
#include "ground/datalog_maintain.hpp"

#include <cstdint>
#include <numeric>
#include <string>
#include <utility>

namespace mln::ground::datalog {

namespace {

class Maintainer {
 public:
  Maintainer(gpu::Engine& eng, const dl::Program& p, std::vector<gpu::Relation>& state, const EvalOptions& o,
             MaintainStats* st)
      : eng_(eng), p_(p), old_(state), o_(o), st_(st), split_rows_(split_rows_for(o)), n_(p.rels.size()) {}

  std::vector<RelationChange> run(const std::vector<RelationChange>& input_changes) {
    change_.assign(n_, RelationChange());
    new_ = old_;
    for (size_t r = 0; r < n_; ++r)
      if (p_.rels[r].input && r < input_changes.size()) normalise(static_cast<int>(r), input_changes[r]);
    for (size_t s = 0; s < p_.strata.size(); ++s) stratum(static_cast<int>(s));
    old_ = std::move(new_);
    return std::move(change_);
  }

 private:
  gpu::Engine& eng_;
  const dl::Program& p_;
  std::vector<gpu::Relation>& old_;  // the state before; the state after once run() ends
  const EvalOptions& o_;
  MaintainStats* st_;
  const uint64_t split_rows_;
  const size_t n_;
  std::vector<gpu::Relation> new_;  // lower strata: the new state; this stratum: as the step needs
  std::vector<RelationChange> change_;

  bool empty(const gpu::Relation& r) const { return !r.impl() || r.rows() == 0; }
  gpu::Relation none(int rel) { return eng_.empty(p_.rels[static_cast<size_t>(rel)].arity); }
  std::vector<int> all_cols(int rel) const {
    std::vector<int> c(static_cast<size_t>(p_.rels[static_cast<size_t>(rel)].arity));
    std::iota(c.begin(), c.end(), 0);
    return c;
  }
  gpu::Relation minus(const gpu::Relation& a, const gpu::Relation& b, int rel) {
    if (empty(a)) return none(rel);
    return empty(b) ? eng_.distinct(a) : eng_.difference(a, b);
  }
  gpu::Relation plus(const gpu::Relation& a, const gpu::Relation& b) {
    if (empty(a)) return b;
    return empty(b) ? a : eng_.union_all(a, b);
  }
  gpu::Relation both(const gpu::Relation& a, const gpu::Relation& b, int rel) {  // a ∩ b, a's duplicates dropped
    if (empty(a) || empty(b)) return none(rel);
    const std::vector<int> c = all_cols(rel);
    return eng_.distinct(eng_.semi_join(a, b, c, c));
  }

  // An input's change against the state: inserted rows not there, deleted
  // rows that are (and not inserted again).
  void normalise(int r, const RelationChange& c) {
    RelationChange& out = change_[static_cast<size_t>(r)];
    out.ins = minus(c.ins, old_[static_cast<size_t>(r)], r);
    out.del = minus(both(c.del, old_[static_cast<size_t>(r)], r), c.ins, r);
    new_[static_cast<size_t>(r)] = plus(minus(old_[static_cast<size_t>(r)], out.del, r), out.ins);
  }

  gpu::Relation eval(const dl::Rule& r, const std::vector<gpu::Relation>& full,
                     const std::vector<gpu::Relation>& delta, int atom) {
    return detail::eval_rule(eng_, p_, r, full, delta, atom, o_.max_rows, split_rows_);
  }

  // The rows of `r`'s head where a lower relation's change meets it: each
  // positive atom of a lower relation reading its deleted rows (over_delete)
  // or inserted ones, and each negated atom reading, as a positive one, the
  // other side.  Every other atom reads `full`.
  gpu::Relation seeded(const dl::Rule& r, const std::vector<char>& in_s, const std::vector<gpu::Relation>& full,
                       bool over_delete) {
    gpu::Relation out;
    std::vector<gpu::Relation> delta(n_);
    for (size_t k = 0; k < r.pos.size(); ++k) {
      const int rel = r.pos[k].rel;
      const RelationChange& c = change_[static_cast<size_t>(rel)];
      const gpu::Relation& d = over_delete ? c.del : c.ins;
      if (in_s[static_cast<size_t>(rel)] || empty(d)) continue;
      delta[static_cast<size_t>(rel)] = d;
      out = plus(out, eval(r, full, delta, static_cast<int>(k)));
    }
    for (size_t k = 0; k < r.neg.size(); ++k) {
      const int rel = r.neg[k].rel;
      const RelationChange& c = change_[static_cast<size_t>(rel)];
      const gpu::Relation& d = over_delete ? c.ins : c.del;
      if (empty(d)) continue;
      // The negated atom also as a positive one, read from the change; it
      // stays negated against `full` too (`!q(X, _)` with one q(X, _) row
      // deleted still fails while another is left).
      dl::Rule v = r;
      v.pos.push_back(v.neg[k]);
      delta[static_cast<size_t>(rel)] = d;
      out = plus(out, eval(v, full, delta, static_cast<int>(v.pos.size()) - 1));
    }
    return out;
  }

  // Semi-naive closure within the stratum: from `frontier`, every recursive
  // rule with one in-stratum atom reading it and the rest `full`; rows
  // already in `seen` are dropped, new ones added to `seen`, to `full` when
  // grow_full and to `added` where given.  False, and stopped, once `seen`
  // holds more than `limit` rows.
  bool close(const std::vector<int>& rules, const std::vector<char>& in_s, std::vector<gpu::Relation>& frontier,
             std::vector<gpu::Relation>& seen, std::vector<gpu::Relation>& full, bool grow_full,
             std::vector<gpu::Relation>* added = nullptr, uint64_t limit = UINT64_MAX) {
    const std::vector<int>& rels = stratum_rels_;
    for (int it = 1;; ++it) {
      uint64_t held = 0;
      for (int rel : rels) held += empty(seen[static_cast<size_t>(rel)]) ? 0 : seen[static_cast<size_t>(rel)].rows();
      if (held > limit) return false;
      std::vector<gpu::Relation> next(n_);
      for (int ri : rules) {
        const dl::Rule& r = p_.rules[static_cast<size_t>(ri)];
        for (int k : detail::recursive_atoms(r, in_s))
          if (!empty(frontier[static_cast<size_t>(r.pos[static_cast<size_t>(k)].rel)]))
            next[static_cast<size_t>(r.head.rel)] = plus(next[static_cast<size_t>(r.head.rel)], eval(r, full, frontier, k));
      }
      uint64_t fresh = 0;
      for (int rel : rels) {
        const size_t i = static_cast<size_t>(rel);
        frontier[i] = minus(next[i], seen[i], rel);
        if (empty(frontier[i])) continue;
        fresh += frontier[i].rows();
        seen[i] = plus(seen[i], frontier[i]);
        if (grow_full) full[i] = plus(full[i], frontier[i]);
        if (added) (*added)[i] = plus((*added)[i], frontier[i]);
      }
      if (o_.progress) o_.progress(stratum_, it, fresh);  // (may throw: a cancel)
      if (fresh == 0) return true;
    }
  }

  void stratum(int s) {
    stratum_ = s;
    stratum_rels_ = p_.strata[static_cast<size_t>(s)];
    const std::vector<int>& rules = p_.stratum_rules[static_cast<size_t>(s)];
    std::vector<char> in_s(n_, 0);
    for (int r : stratum_rels_) in_s[static_cast<size_t>(r)] = 1;
    bool touched = false, aggregates = false;
    for (int ri : rules) {
      const dl::Rule& r = p_.rules[static_cast<size_t>(ri)];
      aggregates = aggregates || r.aggregates();
      for (const auto* atoms : {&r.pos, &r.neg})
        for (const dl::Atom& a : *atoms) {
          const RelationChange& c = change_[static_cast<size_t>(a.rel)];
          touched = touched || (!in_s[static_cast<size_t>(a.rel)] && (!empty(c.ins) || !empty(c.del)));
        }
    }
    if (!touched) return;
    if (st_) ++st_->strata_changed;
    if (aggregates) return evaluate_again(s);
    // 1. Over-delete, against the old state.
    std::vector<gpu::Relation> over(n_), frontier(n_), old_full = old_;
    for (int ri : rules) {
      const dl::Rule& r = p_.rules[static_cast<size_t>(ri)];
      frontier[static_cast<size_t>(r.head.rel)] = plus(frontier[static_cast<size_t>(r.head.rel)], seeded(r, in_s, old_full, true));
    }
    for (int rel : stratum_rels_) {
      const size_t i = static_cast<size_t>(rel);
      frontier[i] = empty(frontier[i]) ? none(rel) : eng_.distinct(frontier[i]);
      over[i] = frontier[i];
    }
    // Where a deletion reaches much of the stratum, over-deleting and
    // re-deriving costs more than evaluating it again: past a sixteenth of
    // its rows, it is evaluated again (points-to, bench/datalog_live.cpp:
    // one deleted assignment over-deletes most of pt and hpt).
    uint64_t rows = 0;
    for (int rel : stratum_rels_) rows += old_[static_cast<size_t>(rel)].rows();
    if (!close(rules, in_s, frontier, over, old_full, false, nullptr, rows / 16)) return evaluate_again(s);
    // 2. Re-derive, against the new lower strata and the stratum less the
    //    over-deleted rows.
    std::vector<gpu::Relation> full = new_, kept(n_), ins(n_);
    for (int rel : stratum_rels_) {
      const size_t i = static_cast<size_t>(rel);
      full[i] = empty(over[i]) ? old_[i] : eng_.difference(old_[i], over[i]);
      if (st_) st_->over_deleted += over[i].rows();
    }
    for (int ri : rules) {
      const dl::Rule& r = p_.rules[static_cast<size_t>(ri)];
      const size_t h = static_cast<size_t>(r.head.rel);
      if (empty(over[h])) continue;
      kept[h] = plus(kept[h], rederive(r, full, over[h]));
    }
    for (int rel : stratum_rels_) {
      const size_t i = static_cast<size_t>(rel);
      kept[i] = empty(kept[i]) ? none(rel) : eng_.distinct(kept[i]);
      full[i] = plus(full[i], kept[i]);
      if (st_) st_->rederived += kept[i].rows();
    }
    // 3. Insert, against the new state, from the lower strata's changes and
    //    the re-derived rows.
    std::vector<gpu::Relation> front(n_), seen = full, added(n_);
    for (int ri : rules) {
      const dl::Rule& r = p_.rules[static_cast<size_t>(ri)];
      front[static_cast<size_t>(r.head.rel)] = plus(front[static_cast<size_t>(r.head.rel)], seeded(r, in_s, full, false));
    }
    for (int rel : stratum_rels_) {
      const size_t i = static_cast<size_t>(rel);
      front[i] = minus(front[i], seen[i], rel);
      seen[i] = plus(seen[i], front[i]);
      full[i] = plus(full[i], front[i]);
      added[i] = front[i];
      ins[i] = plus(kept[i], front[i]);  // the closure's seeds: re-derived and new rows
    }
    close(rules, in_s, ins, seen, full, true, &added);
    for (int rel : stratum_rels_) {
      const size_t i = static_cast<size_t>(rel);
      new_[i] = full[i];
      // Within the rows the change reached (never the whole relation): an
      // added row was either over-deleted (back again) or new; an
      // over-deleted row not re-derived nor added again is lost.
      change_[i].ins = minus(added[i], over[i], rel);
      change_[i].del = minus(minus(over[i], kept[i], rel), added[i], rel);
      if (st_) st_->inserted += change_[i].ins.rows();
    }
  }

  // The over-deleted rows of `r`'s head that `r` still derives from `full`:
  // the head as an extra atom reading them (only those are tried), or,
  // where a comparison assigns a variable (which the extra atom would bind
  // first), the rule in full intersected with them.
  gpu::Relation rederive(const dl::Rule& r, const std::vector<gpu::Relation>& full, const gpu::Relation& over) {
    std::vector<gpu::Relation> delta(n_);
    delta[static_cast<size_t>(r.head.rel)] = over;
    for (const dl::Compare& c : r.cmps)
      if (c.assigns >= 0) return both(eval(r, full, delta, -1), over, r.head.rel);
    dl::Rule v = r;
    v.pos.push_back(r.head);
    return eval(v, full, delta, static_cast<int>(v.pos.size()) - 1);
  }

  // A stratum with an aggregate, or a deletion that reaches far: evaluated
  // again from the new lower strata (evaluate()'s step), its change the
  // difference with the old state.
  void evaluate_again(int s);

  int stratum_ = 0;  // the stratum being maintained, and its relations
  std::vector<int> stratum_rels_;
};

void Maintainer::evaluate_again(int s) {
  if (st_) ++st_->strata_evaluated;
  std::vector<gpu::Relation> full = new_;
  detail::evaluate_stratum(eng_, p_, s, full, o_, 0);
  for (int rel : stratum_rels_) {
    const size_t i = static_cast<size_t>(rel);
    change_[i].ins = minus(full[i], old_[i], rel);
    change_[i].del = minus(old_[i], full[i], rel);
    new_[i] = full[i];
  }
}

}  // namespace

std::vector<RelationChange> maintain(gpu::Engine& eng, const dl::Program& p, std::vector<gpu::Relation>& state,
                                     const std::vector<RelationChange>& input_changes, const EvalOptions& opts,
                                     MaintainStats* stats) {
  return Maintainer(eng, p, state, opts, stats).run(input_changes);
}

}  // namespace mln::ground::datalog
