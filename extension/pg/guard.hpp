// The C++ <-> PostgreSQL error boundary.
//
// Two directions, as pg_duckdb does it:
//  * PostgreSQL -> C++: any PostgreSQL API call made from a C++ frame that
//    owns destructors goes through pg_call(), which runs it under PG_TRY and
//    turns an ERROR (including a query cancel raised by
//    CHECK_FOR_INTERRUPTS) into a C++ PgError exception, so destructors run.
//  * C++ -> PostgreSQL: every SQL-callable function runs its C++ body through
//    mln_guarded(); exceptions are caught there, the C++ frames are left, and
//    only then is the error re-raised with ereport (or the saved ErrorData is
//    re-thrown unchanged).
#pragma once

extern "C" {
#include "postgres.h"
#include "miscadmin.h"
#include "utils/elog.h"
#include "utils/memutils.h"
}

#include <exception>
#include <type_traits>
#include <string>
#include <utility>

namespace mln::pg {

// A PostgreSQL ERROR captured inside a C++ frame.
struct PgError {
  ErrorData* edata;  // allocated in the caller's memory context
};

// A C++-side error destined for ereport.
struct UserError {
  int sqlerrcode;
  std::string message;
  std::string detail;
  std::string hint;
};

// Runs a PostgreSQL API call from C++; converts ERROR into PgError.
template <typename F>
auto pg_call(F&& f) -> decltype(f()) {
  MemoryContext mcx = CurrentMemoryContext;
  ErrorData* edata = nullptr;
  // The lambda result is stored outside PG_TRY so that non-void results work.
  if constexpr (std::is_void_v<decltype(f())>) {
    PG_TRY();
    { f(); }
    PG_CATCH();
    {
      MemoryContextSwitchTo(mcx);
      edata = CopyErrorData();
      FlushErrorState();
    }
    PG_END_TRY();
    if (edata) throw PgError{edata};
  } else {
    decltype(f()) result{};
    PG_TRY();
    { result = f(); }
    PG_CATCH();
    {
      MemoryContextSwitchTo(mcx);
      edata = CopyErrorData();
      FlushErrorState();
    }
    PG_END_TRY();
    if (edata) throw PgError{edata};
    return result;
  }
}

// CHECK_FOR_INTERRUPTS from a C++ frame: a cancel becomes a PgError.
inline void check_interrupts() {
  pg_call([] { CHECK_FOR_INTERRUPTS(); });
}

// Outcome of a guarded C++ body: plain data, no destructors that matter.
struct GuardResult {
  ErrorData* edata = nullptr;  // re-throw as is
  int sqlerrcode = 0;          // or ereport with these
  char* message = nullptr;     // palloc'd
  char* detail = nullptr;
  char* hint = nullptr;
};

// Maps the current C++ exception to a GuardResult (palloc'd strings).
GuardResult translate_current_exception() noexcept;

// Runs body() catching every exception.  Returns with all C++ frames of the
// body unwound.
template <typename F>
GuardResult run_guarded(F&& body) noexcept {
  try {
    body();
    return {};
  } catch (...) {
    return translate_current_exception();
  }
}

// Raises the error described by r, if any (never returns when r holds one).
void raise_if_error(const GuardResult& r);

}  // namespace mln::pg

// Runs a C++ body and raises its error after leaving the body's frames.
#define MLN_GUARDED(...)                                                 \
  do {                                                                  \
    ::mln::pg::GuardResult mln_guard_result_ = ::mln::pg::run_guarded([&]() __VA_ARGS__); \
    ::mln::pg::raise_if_error(mln_guard_result_);                       \
  } while (0)
