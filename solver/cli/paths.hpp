// The files a run reads and writes, checked before any database work: a
// wrong path then costs no server start, load or grounding, and its message
// names the flag, the path and the system's reason.
#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"

namespace mln::cli {

// The files -r names: the path itself; with -dual, path.map and
// path.marginal (Tuffy's names); none without -r (-problog then writes to
// stdout).
std::vector<std::string> output_files(const Options& o);

// Throws std::runtime_error ("-e data/x.db: cannot read the evidence file:
// Is a directory") unless `path` is a file this process can open for reading.
void check_input_file(const std::string& flag, const std::string& what, const std::string& path);

// Throws std::runtime_error unless `path` can be written: not a directory,
// writable if it exists, and in a directory that exists and is writable.
void check_output_file(const std::string& flag, const std::string& path);

// Checks -problog, -i, -e, -queryFile, -conf and the output files (and their .gz with -gz).
void check_paths(const Options& o);

}  // namespace mln::cli
