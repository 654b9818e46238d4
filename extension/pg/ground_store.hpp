// The ground network's store (mln.ground): the program's network tables
// made before the grounding, the clauses written while they are
// consolidated (ClauseStream), and the rest after it (store_network).
#pragma once

#include <memory>
#include <string>

#include "ground/grounder.hpp"
#include "pg/heap_io.hpp"
#include "pg/program_ctx.hpp"
#include "pg/spi.hpp"

namespace mln::pg {

// Seconds of each part of the network store (the stats' "store_parts").
struct StoreTimes {
  double tables = 0, atoms = 0, clauses = 0, query_evidence = 0, keys = 0;
};

// Replaces the program's ground network tables with new, empty ones, before
// the grounding: its clauses go into _clauses as they are consolidated.  An
// error later rolls the replacement back with the rest of the transaction.
void create_network_tables(Spi& spi, const ProgramCtx& ctx);

// The clauses' store while they are consolidated (GroundOptions::on_clauses,
// issue #45: the merge and the store are of the same size at 10^9
// clauses, so they overlap).  Ranges go into _clauses as they come, until
// one holds a start of unit propagation's forcing: from there they wait
// for propagation, which may rewrite the network (then the table is made
// again and takes the whole network).
struct ClauseStream {
  std::string table;
  bool propagate = false;  // unit propagation follows the consolidation
  std::unique_ptr<ClauseChunkWriter> writer;
  size_t stored = 0;       // clauses written during the consolidation (0 where they were written again)
  bool held = false;       // the rest waits for propagation
  size_t held_at = 0;      // the first clause that waited
  bool rewritten = false;  // propagation rewrote the network after some were written
  double seconds = 0;      // in the writer

  void add(const int64_t* offsets, const int32_t* lits, const double* weights, size_t first, size_t last);
  // The clauses not yet written, after the grounding; all of them again
  // where propagation rewrote the network after some were.
  void finish(Spi& spi, const std::string& schema, const ground::GroundOutput& out);
};

// Stores `out` in the tables create_network_tables made (the clauses
// through `clauses`, which may hold some already).
StoreTimes store_network(Spi& spi, const ProgramCtx& ctx, const ground::GroundOutput& out, ClauseStream& clauses);

}  // namespace mln::pg
