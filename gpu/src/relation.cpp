// Backend-independent parts of the engine: Relation accessors and the
// semi-naive fixpoint driver.
#include "mln/relation.hpp"

#include "relation_impl.hpp"

namespace mln::gpu {

// Number of rows (0 for a null relation).
size_t Relation::rows() const { return impl_ ? impl_->rows : 0; }

// Number of columns (0 for a null relation).
int Relation::ncols() const { return impl_ ? static_cast<int>(impl_->cols.size()) : 0; }

// Backend the relation lives on.
Backend Relation::backend() const {
  MLN_EXPECTS(impl_ != nullptr, "backend(): null relation");
  return impl_->backend;
}

// Semi-naive evaluation: only tuples new in the last round (delta) feed the
// next round, and every round is deduplicated before it is merged.
Relation fixpoint(Engine& eng, const Relation& base, const DeriveFn& derive, FixpointStats* stats,
                  int max_iterations) {
  Relation full = eng.distinct(base);
  Relation delta = full;
  int it = 0;
  while (delta.rows() > 0 && it < max_iterations) {
    ++it;
    Relation derived = derive(eng, full, delta);
    if (derived.rows() == 0) break;
    MLN_EXPECTS(derived.ncols() == full.ncols(), "fixpoint: rule derived tuples of the wrong arity");
    Relation fresh = eng.difference(derived, full);  // distinct and not yet known
    delta = fresh;
    if (fresh.rows() > 0) full = eng.union_all(full, fresh);
  }
  if (stats) {
    stats->iterations = it;
    stats->rows = full.rows();
  }
  return full;
}

}  // namespace mln::gpu
