// Follow mode (issue #62): a background process per program, started by
// mln.follow(name) as the role that calls it, keeps the program's answer
// current after each commit.  Every `every` (mln.followers) it looks at
// the program: where it is stale (a table it was grounded from changed) or
// has no answer of the follower's task and no job on the way, it grounds it
// again (mln.refresh, through the live state this process keeps between
// changes: the grounding of a change costs the change) and queues a job with
// the follower's task and options (mln.infer) for mln_worker, in one
// transaction.  It runs with that role's rights, never the worker's, so what
// the role's views and functions do runs as the role.  It ends when its
// row of mln.followers goes (mln.unfollow, mln.drop_program), when the row
// never appears (the transaction that called mln.follow rolled back), when
// its role is dropped, or on SIGTERM; an error is kept in the row and tried
// again 1, 2, 4 ... 60 s later.
//
// Plain PostgreSQL C in a C++ file: no C++ object lives across the
// PG_TRY blocks (a longjmp skips destructors).
extern "C" {
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(mln_follow_start);
PGDLLEXPORT Datum mln_follow_start(PG_FUNCTION_ARGS);
PGDLLEXPORT void mln_follow_main(Datum arg);
}

namespace {

// What the starting backend hands the process (bgw_extra).
struct FollowArgs {
  Oid database;
  Oid role;
  char program[BGW_EXTRALEN - 2 * sizeof(Oid)];
};
static_assert(sizeof(FollowArgs) <= BGW_EXTRALEN, "follow arguments fit bgw_extra");

// One look at the program, in a transaction of its own; returns the
// milliseconds to wait before the next (0: the follower is to end).
// `seen`: whether its row was there before.
long follow_round(const char* program, Oid role, bool* seen, TimestampTz started, int* errors) {
  long wait_ms = 100;
  bool end = false;
  MemoryContext outer = CurrentMemoryContext;
  SetCurrentStatementStartTimestamp();
  StartTransactionCommand();
  PushActiveSnapshot(GetTransactionSnapshot());
  PG_TRY();
  {
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "mln follow: SPI_connect failed");
    Oid types[1] = {TEXTOID};
    Datum args[1] = {CStringGetTextDatum(program)};
    // Whether an answer is due: the network is stale or not grounded, or no
    // answer of the task was written since and no job is queued or running.
    int rc = SPI_execute_with_args(
        "SELECT f.task, f.options::text, greatest(extract(epoch FROM f.every) * 1000, 10)::int8, "
        "       mln.program_state(f.program) IN ('stale', 'not grounded') OR "
        "       (NOT EXISTS (SELECT 1 FROM mln.answer_versions(f.program) a "
        "                     WHERE a.answer = CASE f.task WHEN 'marginal' THEN 'marginal' ELSE 'map' END) "
        "        AND NOT EXISTS (SELECT 1 FROM mln.jobs j WHERE j.program = f.program "
        "                         AND j.status IN ('queued', 'running'))) "
        "FROM mln.followers f WHERE f.program = $1",
        1, types, args, nullptr, false, 1);
    if (rc != SPI_OK_SELECT) elog(ERROR, "mln follow: reading mln.followers failed");
    const bool row = SPI_processed > 0;
    HeapTuple tup = row ? SPI_copytuple(SPI_tuptable->vals[0]) : nullptr;
    TupleDesc td = row ? CreateTupleDescCopy(SPI_tuptable->tupdesc) : nullptr;
    // The role it runs as was dropped: nothing it does would be anyone's.
    Oid rt[1] = {OIDOID};
    Datum ra[1] = {ObjectIdGetDatum(role)};
    if (SPI_execute_with_args("SELECT 1 FROM pg_catalog.pg_roles WHERE oid = $1", 1, rt, ra, nullptr, true, 1) !=
        SPI_OK_SELECT)
      elog(ERROR, "mln follow: reading pg_roles failed");
    const bool role_gone = SPI_processed == 0;
    if (role_gone) {
      end = true;
    } else if (!row) {
      // Gone (unfollowed, dropped), or never committed (the call rolled back).
      end = *seen || TimestampDifferenceExceeds(started, GetCurrentTimestamp(), 60000);
    } else {
      *seen = true;
      bool isnull = false;
      wait_ms = static_cast<long>(DatumGetInt64(SPI_getbinval(tup, td, 3, &isnull)));
      const bool due = DatumGetBool(SPI_getbinval(tup, td, 4, &isnull)) && !isnull;
      if (due) {
        char* task = SPI_getvalue(tup, td, 1);
        char* options = SPI_getvalue(tup, td, 2);
        Oid t3[3] = {TEXTOID, TEXTOID, TEXTOID};
        Datum a3[3] = {CStringGetTextDatum(program), CStringGetTextDatum(task), CStringGetTextDatum(options)};
        pgstat_report_activity(STATE_RUNNING, "mln follow: grounding again and queueing a job");
        rc = SPI_execute_with_args(
            "WITH g AS (SELECT CASE WHEN mln.program_state($1) = 'not grounded' THEN mln.ground($1) "
            "                       ELSE mln.refresh($1) END AS x), "
            "     j AS (SELECT mln.infer($1, $2, $3::jsonb) AS id FROM g) "
            "UPDATE mln.followers SET refreshed_at = clock_timestamp(), last_job = j.id, error = NULL "
            "  FROM j WHERE program = $1",
            3, t3, a3, nullptr, false, 0);
        if (rc != SPI_OK_UPDATE) elog(ERROR, "mln follow: queueing the job failed");
        pgstat_report_activity(STATE_IDLE, nullptr);
      }
    }
    SPI_finish();
    PopActiveSnapshot();
    CommitTransactionCommand();
    *errors = 0;
  }
  PG_CATCH();
  {
    // Keep the error in the row (in a transaction of its own) and try
    // again a second later.
    MemoryContextSwitchTo(outer);
    ErrorData* e = CopyErrorData();
    EmitErrorReport();
    FlushErrorState();
    AbortCurrentTransaction();
    StartTransactionCommand();
    PushActiveSnapshot(GetTransactionSnapshot());
    if (SPI_connect() == SPI_OK_CONNECT) {
      Oid t2[2] = {TEXTOID, TEXTOID};
      Datum a2[2] = {CStringGetTextDatum(program), CStringGetTextDatum(e->message ? e->message : "error")};
      SPI_execute_with_args("UPDATE mln.followers SET error = $2 WHERE program = $1", 2, t2, a2, nullptr, false, 0);
      SPI_finish();
    }
    PopActiveSnapshot();
    CommitTransactionCommand();
    FreeErrorData(e);
    pgstat_report_activity(STATE_IDLE, nullptr);
    // 1 s, 2 s, 4 s ... at most a minute: an error that stays (a table
    // gone) is not written to the log every second.
    *errors = *errors < 6 ? *errors + 1 : 7;
    wait_ms = 1000L << (*errors - 1);
    if (wait_ms > 60000) wait_ms = 60000;
  }
  PG_END_TRY();
  return end ? 0 : wait_ms;
}

}  // namespace

// The background process's entry (bgw_function_name).
void mln_follow_main(Datum) {
  FollowArgs a;
  memcpy(&a, MyBgworkerEntry->bgw_extra, sizeof a);
  a.program[sizeof a.program - 1] = '\0';
  pqsignal(SIGTERM, die);
  BackgroundWorkerUnblockSignals();
  BackgroundWorkerInitializeConnectionByOid(a.database, a.role, 0);
  char app[BGW_MAXLEN];
  snprintf(app, sizeof app, "mln_follow %s", a.program);
  SetConfigOption("application_name", app, PGC_USERSET, PGC_S_SESSION);
  pgstat_report_appname(app);
  bool seen = false;
  int errors = 0;
  const TimestampTz started = GetCurrentTimestamp();
  for (;;) {
    CHECK_FOR_INTERRUPTS();
    const long ms = follow_round(a.program, a.role, &seen, started, &errors);
    if (ms <= 0) break;
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, ms, PG_WAIT_EXTENSION);
    ResetLatch(MyLatch);
  }
  proc_exit(0);
}

// mln._follow_start(program text) returns int: starts the follower of
// `program` as the current role in this database and returns its pid.
Datum mln_follow_start(PG_FUNCTION_ARGS) {
  const char* program = text_to_cstring(PG_GETARG_TEXT_PP(0));
  FollowArgs a;
  memset(&a, 0, sizeof a);
  if (strlen(program) >= sizeof a.program) ereport(ERROR, (errcode(ERRCODE_NAME_TOO_LONG), errmsg("program name too long to follow")));
  // Only for the row mln.follow just inserted (a follower takes one of the
  // server's background process slots).
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "mln._follow_start: SPI_connect failed");
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(program)};
  if (SPI_execute_with_args("SELECT 1 FROM mln.followers WHERE program = $1 AND pid IS NULL", 1, types, args, nullptr,
                            true, 1) != SPI_OK_SELECT || SPI_processed != 1)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("mln._follow_start is called by mln.follow"), errhint("call mln.follow(name)")));
  SPI_finish();
  a.database = MyDatabaseId;
  a.role = GetUserId();
  strlcpy(a.program, program, sizeof a.program);
  BackgroundWorker w;
  memset(&w, 0, sizeof w);
  snprintf(w.bgw_name, BGW_MAXLEN, "mln follow %s", program);
  snprintf(w.bgw_type, BGW_MAXLEN, "mln follow");
  w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
  w.bgw_start_time = BgWorkerStart_RecoveryFinished;
  w.bgw_restart_time = BGW_NEVER_RESTART;
  snprintf(w.bgw_library_name, BGW_MAXLEN, "pg_mln");
  snprintf(w.bgw_function_name, BGW_MAXLEN, "mln_follow_main");
  w.bgw_notify_pid = MyProcPid;
  memcpy(w.bgw_extra, &a, sizeof a);
  BackgroundWorkerHandle* handle = nullptr;
  if (!RegisterDynamicBackgroundWorker(&w, &handle))
    ereport(ERROR, (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED), errmsg("could not start the follower of program \"%s\"", program),
                    errhint("every background process slot is taken: raise max_worker_processes")));
  pid_t pid = 0;
  if (WaitForBackgroundWorkerStartup(handle, &pid) != BGWH_STARTED)
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_RESOURCES), errmsg("the follower of program \"%s\" did not start", program)));
  PG_RETURN_INT32(pid);
}
