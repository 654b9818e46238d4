// The backend's half of a ProbLog run, shared by mln.problog (which then
// samples in the backend, problog_fn.cpp) and mln.problog_job (which stores
// the ground program for the worker, problog_job_fn.cpp).
#pragma once

#include <string>

#include "ground/problog_ground.hpp"
#include "core/problog/problog_options.hpp"
#include "pg/spi.hpp"

namespace mln::pg {

// The options jsonb (isnull: none) through the reader the worker reads a
// job's options with (core/problog/problog_options.hpp); a bad one is raised as the
// SQL functions' error, naming `fn`.
mln::problog::ProblogOptions problog_options(Spi& spi, Datum options, bool isnull, const std::string& fn);

// Parses, checks and grounds `text` over the caller's tables (with the
// caller's privileges, on the engine of o.device): errors with line and
// column, the program's own before any table is read.  The ground program's
// size and time as a NOTICE when o.verbose (else DEBUG1).
ground::problog::GroundProgram ground_problog(Spi& spi, const std::string& text, const mln::problog::ProblogOptions& o);

}  // namespace mln::pg
