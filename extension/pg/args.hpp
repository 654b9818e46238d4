// Fetching SQL-function arguments as C++ values.
#pragma once

#include <string>

extern "C" {
#include "postgres.h"
#include "fmgr.h"
}

namespace mln::pg {

// Argument i (a non-null text) as a std::string.
inline std::string text_arg(FunctionCallInfo fcinfo, int i) {
  text* t = PG_GETARG_TEXT_PP(i);
  return std::string(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
}

}  // namespace mln::pg
