// Module entry: PG_MODULE_MAGIC, GUC registration, mln.version() and
// mln.device_info().  _PG_init only registers; it never touches CUDA.
#include "pg/guard.hpp"
#include "pg/engine.hpp"
#include "pg/live_ground.hpp"
#include "pg/json.hpp"

#include <climits>
#include <sstream>
#include <thread>

extern "C" {
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"

PG_MODULE_MAGIC;
PGDLLEXPORT void _PG_init(void);
PG_FUNCTION_INFO_V1(mln_version);
PG_FUNCTION_INFO_V1(mln_device_info);
PG_FUNCTION_INFO_V1(mln_device_warmup);
}

namespace mln::pg {
int guc_device = 0;
int guc_gpu_memory_limit_mb = 0;
int guc_cpu_threads = 0;
int guc_cpu_memory_limit_mb = 0;
bool guc_regress = false;
bool guc_unit_propagation = true;
}  // namespace mln::pg

static const struct config_enum_entry device_options[] = {
    {"auto", 0, false}, {"gpu", 1, false}, {"cpu", 2, false}, {nullptr, 0, false}};

// Registers the mln.* settings.
void _PG_init(void) {
  DefineCustomEnumVariable("mln.device", "Where pg_mln operators run: auto, gpu or cpu.",
                           "'auto' uses a GPU when one is usable and the CPU backend otherwise; "
                           "'gpu' fails when no GPU is usable.",
                           &mln::pg::guc_device, 0, device_options, PGC_USERSET, 0, nullptr,
                           nullptr, nullptr);
  DefineCustomIntVariable("mln.gpu_memory_limit", "Device memory one operator may use (MB).",
                          "0 means 80% of the free device memory. Larger inputs are processed "
                          "in partitions.",
                          &mln::pg::guc_gpu_memory_limit_mb, 0, 0, INT_MAX / 2, PGC_USERSET,
                          GUC_UNIT_MB, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("mln.cpu_threads", "Threads of the CPU backend (0 = all cores).",
                          nullptr, &mln::pg::guc_cpu_threads, 0, 0, 1024, PGC_USERSET, 0,
                          nullptr, nullptr, nullptr);
  // A superuser's setting: it protects the machine from any one backend, so
  // a role may not raise it.
  DefineCustomIntVariable("mln.cpu_memory_limit", "Host memory the CPU backend's arrays may hold in one backend (MB).",
                          "0 means half of the machine's memory (or of its cgroup's limit). Past it an operator, a "
                          "Datalog rule, rule learning or a ProbLog grounding fails with an error instead of taking "
                          "the machine's memory.",
                          &mln::pg::guc_cpu_memory_limit_mb, 0, 0, INT_MAX / 2, PGC_SUSET, GUC_UNIT_MB, nullptr,
                          nullptr, nullptr);
  DefineCustomBoolVariable("mln.regress", "Hide machine-dependent output (for tests).", nullptr,
                           &mln::pg::guc_regress, false, PGC_USERSET, GUC_NOT_IN_SAMPLE,
                           nullptr, nullptr, nullptr);
  DefineCustomBoolVariable("mln.unit_propagation",
                           "Whether mln.ground fixes the atoms the hard clauses force and simplifies the network.",
                           "Unit propagation of the hard clauses after grounding: the fixed atoms keep one hard unit "
                           "clause each, satisfied clauses are dropped and false literals removed. The optimum does "
                           "not change; when the hard clauses contradict each other the network is left as grounded.",
                           &mln::pg::guc_unit_propagation, true, PGC_USERSET, 0, nullptr, nullptr, nullptr);
  DefineCustomBoolVariable("mln.live_grounding",
                           "Whether grounding a program again moves this session's live state instead of grounding "
                           "from scratch.",
                           "Live grounding (docs/live.md): the session keeps the state of the network it stored "
                           "last, and a later grounding of the same program (mln.refresh, CALL mln.solve on a stale "
                           "program, mln.ground) grounds only what the change touched. The network is the same.",
                           &mln::pg::guc_live_grounding, true, PGC_USERSET, 0, nullptr, nullptr, nullptr);
  MarkGUCPrefixReserved("mln");
}

// mln.version(): the library's version.
Datum mln_version(PG_FUNCTION_ARGS) { PG_RETURN_TEXT_P(cstring_to_text("0.17.0")); }


// mln.device_info(): JSON naming the backend in use and the GPU, if any.
Datum mln_device_info(PG_FUNCTION_ARGS) {
  char* json = nullptr;
  MLN_GUARDED({
    mln::gpu::Engine& eng = mln::pg::engine_for("");
    mln::gpu::DeviceInfo d = mln::gpu::query_device();
    std::ostringstream o;
    o << "{\"backend\": " << mln::pg::json_quote(eng.backend() == mln::gpu::Backend::CUDA ? "cuda" : "cpu")
      << ", \"engine\": " << mln::pg::json_quote(mln::pg::guc_regress ? "<hidden>" : eng.name())
      << ", \"cuda_compiled\": " << (d.cuda_compiled ? "true" : "false")
      << ", \"device_count\": " << d.device_count;
    if (d.device_count > 0) {
      o << ", \"device\": " << mln::pg::json_quote(d.name) << ", \"memory_total_mb\": " << (d.total_memory >> 20)
        << ", \"memory_free_mb\": " << (d.free_memory >> 20) << ", \"compute_capability\": \""
        << d.cc_major << "." << d.cc_minor << "\"";
    } else {
      o << ", \"reason\": " << mln::pg::json_quote(d.error);
    }
    unsigned hw = std::thread::hardware_concurrency();
    o << ", \"cpu_threads\": " << (mln::pg::guc_regress ? 0 : (mln::pg::guc_cpu_threads ? mln::pg::guc_cpu_threads : static_cast<int>(hw)))
      << "}";
    std::string s = o.str();
    json = mln::pg::pg_call([&] { return pstrdup(s.c_str()); });
  });
  Datum d = DirectFunctionCall1(jsonb_in, CStringGetDatum(json));
  PG_RETURN_DATUM(d);
}

// mln.device_warmup(device text DEFAULT NULL): starts the GPU's
// initialisation in the background and returns at once; false when nothing
// was started and no GPU engine exists (device 'cpu', or no usable GPU known).
Datum mln_device_warmup(PG_FUNCTION_ARGS) {
  bool started = false;
  MLN_GUARDED({
    std::string device = PG_ARGISNULL(0) ? std::string()
                                         : mln::pg::pg_call([&] { return std::string(text_to_cstring(PG_GETARG_TEXT_PP(0))); });
    started = mln::pg::start_device_warmup(device);
  });
  PG_RETURN_BOOL(started);
}
