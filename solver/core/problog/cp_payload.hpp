// A ground CP-theory and its query rows as one flat run of bytes: what
// mln.problog_job stores for the worker (docs/problog.md, "Jobs").  The
// backend grounds the program (it reads the caller's tables with the
// caller's privileges) and encodes it; the worker decodes it and samples.
// The bytes are the arrays of CpProgram as they lie in memory, each after
// its element count, behind a magic and a byte-order mark: no text to
// build and parse, one memcpy per array.  Decoding checks every count
// against the bytes left and every offset and index, since anyone who may
// queue a job may write these bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/problog/forward_sampler.hpp"

namespace mln::problog {

struct CpPayload {
  CpProgram cp;
  std::vector<std::string> query_text;  // one per answer row, in the order mln.problog returns them
  std::vector<int32_t> query_index;     // each row's place in cp.queries; -1: it cannot be true
};

// The bytes of `cp` with the query rows (texts[i], index[i]).
std::string encode_cp_payload(const CpProgram& cp, const std::vector<std::string>& texts,
                              const std::vector<int32_t>& index);

// Decodes and checks bytes of encode_cp_payload; throws std::invalid_argument
// ("corrupt ground program: ...") on anything else.
CpPayload decode_cp_payload(const std::string& bytes);

}  // namespace mln::problog
