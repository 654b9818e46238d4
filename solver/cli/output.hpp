// Tuffy's MAP output file (docs/tuffy-reference.md §8.1).
#pragma once

#include <string>

namespace mln::worker { class Conn; }

namespace mln::cli {

// Formats one argument: quoted with Java escapes, unless it starts with a
// digit and contains no space (then bare).
std::string format_arg(const std::string& v);
// Writes the true query atoms of `program` to `path` (gzipped to path.gz
// with gz).
void write_map_output(mln::worker::Conn& c, const std::string& program, const std::string& path, bool gz);

}  // namespace mln::cli
