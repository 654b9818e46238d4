// The 'sql' grounding path: Tuffy's grounding (docs/tuffy-reference.md §5)
// as plain SQL statements run inside the backend through SPI, kept as the
// reference and the fallback for the operator-engine paths.  It produces the
// same ground network as ground::ground() (up to atom renaming; in practice
// the atom ids are identical too).  See docs/grounding-sql.md.
#pragma once

#include "ground/grounder.hpp"
#include "pg/program_ctx.hpp"
#include "pg/spi.hpp"

namespace mln::pg {

// Grounds the program in `ctx` with SQL over TEMP tables (dropped before it
// returns; ON COMMIT DROP otherwise).  `in` is the input the operator path
// gets (symbols, type domains, queries; its evidence is used for predicates
// bound to user relations); the program's symbols must already be flushed to
// its _symbols table.  Throws UserError (FEATURE_NOT_SUPPORTED) for features
// this path does not implement, lang::LangError for semantic errors, and
// PgError for errors raised by PostgreSQL.
ground::GroundOutput ground_sql(Spi& spi, const ProgramCtx& ctx, const ground::GroundInput& in,
                                const ground::GroundOptions& opts);

}  // namespace mln::pg
