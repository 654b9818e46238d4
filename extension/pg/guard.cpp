// Translation of C++ exceptions into PostgreSQL errors (see guard.hpp).
#include "pg/guard.hpp"

#include <new>
#include <stdexcept>

#include "lang/program.hpp"
#include "mln/relation.hpp"

extern "C" {
#include "utils/errcodes.h"
}

namespace mln::pg {

namespace {

// Copies a std::string into the current memory context.
char* pdup(const std::string& s) noexcept { return pstrdup(s.c_str()); }

// SQLSTATE for each kind of language error.
int lang_errcode(lang::LangError::Kind k) {
  using K = lang::LangError::Kind;
  switch (k) {
    case K::Syntax: return ERRCODE_SYNTAX_ERROR;
    case K::UnknownPredicate: return ERRCODE_UNDEFINED_OBJECT;
    case K::ArityMismatch: return ERRCODE_INVALID_PARAMETER_VALUE;
    case K::TypeClash: return ERRCODE_DATATYPE_MISMATCH;
    case K::DuplicateDeclaration: return ERRCODE_DUPLICATE_OBJECT;
    case K::EmptyProgram: return ERRCODE_INVALID_PARAMETER_VALUE;
    case K::VariableInEvidence: return ERRCODE_INVALID_TEXT_REPRESENTATION;
    case K::BadValue: return ERRCODE_INVALID_PARAMETER_VALUE;
    case K::UnsafeVariable: return ERRCODE_INVALID_PARAMETER_VALUE;
  }
  return ERRCODE_INTERNAL_ERROR;
}

// SQLSTATE for each kind of engine error.
int engine_errcode(gpu::EngineError::Kind k) {
  using K = gpu::EngineError::Kind;
  switch (k) {
    case K::InvalidArgument: return ERRCODE_INVALID_PARAMETER_VALUE;
    case K::OutOfMemory:
    case K::HostOutOfMemory:
    case K::HostMemoryLimit: return ERRCODE_OUT_OF_MEMORY;
    case K::DeviceUnavailable: return ERRCODE_FEATURE_NOT_SUPPORTED;
    case K::DeviceFailure: return ERRCODE_SYSTEM_ERROR;
    case K::Cancelled: return ERRCODE_QUERY_CANCELED;
  }
  return ERRCODE_INTERNAL_ERROR;
}

}  // namespace

GuardResult translate_current_exception() noexcept {
  GuardResult r;
  try {
    throw;
  } catch (const PgError& e) {
    r.edata = e.edata;
  } catch (const UserError& e) {
    r.sqlerrcode = e.sqlerrcode;
    r.message = pdup(e.message);
    if (!e.detail.empty()) r.detail = pdup(e.detail);
    if (!e.hint.empty()) r.hint = pdup(e.hint);
  } catch (const lang::LangError& e) {
    r.sqlerrcode = lang_errcode(e.kind());
    r.message = pdup(e.where_what());
    if (!e.token().empty()) r.detail = pdup("offending token: \"" + e.token() + "\"");
  } catch (const gpu::EngineError& e) {
    r.sqlerrcode = engine_errcode(e.kind());
    r.message = pdup(e.what());
    if (e.kind() == gpu::EngineError::Kind::DeviceUnavailable)
      r.hint = pdup("use device => 'cpu' or 'auto', or SET mln.device = 'auto'");
    // The hint names the setting that bounds the memory that ran out: the
    // CPU backend's (mln.cpu_memory_limit) or the device's.
    if (e.kind() == gpu::EngineError::Kind::HostMemoryLimit)
      r.hint = pdup("mln.cpu_memory_limit bounds the CPU backend's memory (a superuser's setting); a smaller input, "
                    "a lower max_rows, or device => 'gpu' needs less of it");
    else if (e.kind() == gpu::EngineError::Kind::HostOutOfMemory)
      r.hint = pdup("the machine has no more memory for the CPU backend: lower mln.cpu_memory_limit so that it fails "
                    "before the machine does, or give it a smaller input");
    else if (e.kind() == gpu::EngineError::Kind::OutOfMemory)
      r.hint = pdup("lower mln.gpu_memory_limit so that operators run in partitions");
  } catch (const std::bad_alloc&) {
    r.sqlerrcode = ERRCODE_OUT_OF_MEMORY;
    r.message = pdup("out of memory in pg_mln");
  } catch (const std::exception& e) {
    r.sqlerrcode = ERRCODE_INTERNAL_ERROR;
    r.message = pdup(std::string("pg_mln internal error: ") + e.what());
  } catch (...) {
    r.sqlerrcode = ERRCODE_INTERNAL_ERROR;
    r.message = pdup("pg_mln internal error: unknown exception");
  }
  return r;
}

void raise_if_error(const GuardResult& r) {
  if (r.edata) ReThrowError(r.edata);
  if (r.sqlerrcode == 0) return;
  // An engine that stopped for a pending cancel: PostgreSQL raises it with
  // its own words ("canceling statement due to statement timeout" / "...
  // user request"), as any other statement's cancel.
  if (r.sqlerrcode == ERRCODE_QUERY_CANCELED) CHECK_FOR_INTERRUPTS();
  ereport(ERROR, (errcode(r.sqlerrcode), errmsg_internal("%s", r.message),
                  r.detail ? errdetail_internal("%s", r.detail) : 0,
                  r.hint ? errhint("%s", r.hint) : 0));
}

}  // namespace mln::pg
