"""Runs tests/e2e/hostile_cases.py's inputs and the command line's (issue
#59): each SQL case in a session of its own as the plain role given, then
asserts that the server was not restarted (pg_postmaster_start_time), that
the session is alive after it, that it failed where it must (or succeeded),
and that a failed case changed nothing (a fingerprint of every relation
outside the system schemas and of pg_mln's catalogs, taken as superuser).
Prints TAP-like lines and a closing "N passed, M failed".
Usage: hostile.py ROLE PGMLN TMPDIR"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_cases  # noqa: E402

FINGERPRINT = r"""
SELECT pg_postmaster_start_time()::text || ' ' || md5(coalesce((SELECT string_agg(x, ',' ORDER BY x) FROM (
  SELECT n.nspname || '.' || c.relname || ':' || c.relkind::text AS x
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
  UNION ALL SELECT 'programs ' || string_agg(name || ':' || coalesce(grounded_at::text, ''), ',' ORDER BY name) FROM mln.programs
  UNION ALL SELECT 'predicates ' || count(*) FROM mln.predicates
  UNION ALL SELECT 'clauses ' || count(*) || ' ' || coalesce(sum(hashtext(clause || weight::text)), 0) FROM mln.clauses
  UNION ALL SELECT 'jobs ' || count(*) FROM mln.jobs
  UNION ALL SELECT 'smokes ' || count(*) FROM mln_base."Smokes"
  UNION ALL SELECT 'state ' || mln.program_state('base')
  UNION ALL SELECT 't ' || count(*) FROM hostile_own.t) s), ''))
"""

passed = failed = 0


def report(ok, name, why=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok - {name}")
    else:
        failed += 1
        print(f"not ok - {name}: {why}")
    sys.stdout.flush()


def admin(sql):
    r = subprocess.run(["psql", "-qXAt", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True,
                       env=dict(os.environ, PGUSER=os.environ.get("MLN_ADMIN", "postgres")))
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return r.stdout.strip()


def run_sql(role, sql):
    script = sql + ";\n\\echo __ALIVE__\nSELECT 'alive';\n"
    env = dict(os.environ, PGUSER=role, PGOPTIONS="-c statement_timeout=60s -c client_min_messages=warning")
    try:
        r = subprocess.run(["psql", "-qXAt"], input=script, capture_output=True, text=True, env=env, timeout=180)
    except subprocess.TimeoutExpired:
        return False, True, "psql did not return in 180 s"
    alive = "__ALIVE__\nalive" in r.stdout
    errored = "ERROR:" in r.stderr
    return alive, errored, r.stderr.strip()[-300:]


def sql_cases(role):
    base = admin(FINGERPRINT)
    start = base.rsplit(" ", 1)[0]
    for name, sql, expect in hostile_cases.all_cases():
        alive, errored, err = run_sql(role, sql)
        after = admin(FINGERPRINT)
        problems = []
        if after.rsplit(" ", 1)[0] != start:
            problems.append("the server restarted")
        if not alive:
            problems.append("the session did not survive: " + err)
        if expect == "error" and not errored:
            problems.append("no error")
        if expect == "ok" and errored:
            problems.append("an error: " + err)
        if errored and after != base:
            problems.append("a failed call changed something")
        report(not problems, name, "; ".join(problems))
        if "the server restarted" in problems:
            return  # what follows would only repeat it
        base = after


def cli_cases(role, pgmln, tmp):
    """The command line: bad files and options end with a message and an
    exit status, never a signal."""
    def write(name, text):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path
    smoke_dir = os.environ["MLN_SMOKE"]
    prog, ev, qf = (os.path.join(smoke_dir, f) for f in ("prog.mln", "evidence.db", "query.db"))
    deep = write("deep.mln", "Smokes(person)\nCancer(person)\n1 " + "(" * 100000 + "Smokes(x)" + ")" * 100000 + "\n")
    longc = write("long.mln", "Smokes(person)\n1 " + " v ".join(["Smokes(x)"] * 100000) + "\n")
    garbage = os.path.join(tmp, "garbage.mln")
    with open(garbage, "wb") as f:
        f.write(bytes(range(256)) * 64)
    badev = write("bad.db", "Smokes(Anna\n" + "(" * 100000 + "\n")
    deep_pl = write("deep.pl", "0.5::a. query(" + "(" * 100000 + "a" + ")" * 100000 + ").\n")
    chain_dl = write("chain.pl", "0.5::p0.\n" + "".join(f"p{i + 1} :- p{i}.\n" for i in range(100000)) + "query(p100000).\n")
    dsn = f"host={os.environ['PGHOST']} port={os.environ['PGPORT']} dbname={os.environ['PGDATABASE']} user={role}"
    out = os.path.join(tmp, "out.txt")
    cases = [
        ("a program file that does not exist", ["-i", "/nonexistent/prog.mln", "-e", ev, "-queryFile", qf, "-r", out]),
        ("a directory as the program", ["-i", tmp, "-e", ev, "-queryFile", qf, "-r", out]),
        ("binary garbage as the program", ["-i", garbage, "-e", ev, "-queryFile", qf, "-r", out]),
        ("10^5 nested parentheses", ["-i", deep, "-e", ev, "-queryFile", qf, "-r", out]),
        ("a clause of 10^5 literals", ["-i", longc, "-e", ev, "-queryFile", qf, "-r", out]),
        ("bad evidence", ["-i", prog, "-e", badev, "-queryFile", qf, "-r", out]),
        ("an output in a missing directory", ["-i", prog, "-e", ev, "-queryFile", qf, "-r", "/nonexistent/x/out.txt"]),
        ("an unknown flag", ["-i", prog, "-e", ev, "-queryFile", qf, "-r", out, "-explode"]),
        ("a flag without its value", ["-i", prog, "-e", ev, "-queryFile"]),
        ("a timeout of -1", ["-i", prog, "-e", ev, "-queryFile", qf, "-r", out, "-timeout", "-1"]),
        ("a timeout that is no number", ["-i", prog, "-e", ev, "-queryFile", qf, "-r", out, "-timeout", "soon"]),
        ("threads 100000", ["-i", prog, "-e", ev, "-queryFile", qf, "-r", out, "-threads", "100000"]),
        ("maxFlips as text", ["-i", prog, "-e", ev, "-queryFile", qf, "-r", out, "-maxFlips", "x"]),
        ("a query that is no predicate", ["-i", prog, "-e", ev, "-q", "Drinks", "-r", out]),
        ("ProbLog nested 10^5 deep", ["-problog", deep_pl, "-o", out]),
        ("ProbLog options nested 10^5 deep", ["-problog", chain_dl, "-o", out, "-problogOptions",
                                              '{"samples": ' + "[" * 30000 + "]" * 30000 + "}"]),
        ("ProbLog with threads 4096", ["-problog", chain_dl, "-o", out, "-problogOptions", '{"threads": 4096, "samples": 64}']),
        ("ProbLog options that are not JSON", ["-problog", chain_dl, "-o", out, "-problogOptions", "{samples: 64"]),
    ]
    ok_cases = {"ProbLog with threads 4096"}
    for name, args in cases:
        try:
            r = subprocess.run([pgmln, "--dsn", dsn] + args, capture_output=True, text=True, timeout=300)
            rc, err = r.returncode, (r.stderr or r.stdout).strip()
        except subprocess.TimeoutExpired:
            rc, err = None, "did not end in 300 s"
        problems = []
        if rc is None or rc < 0 or rc >= 128:
            problems.append(f"ended by a signal or not at all (status {rc}): {err[-200:]}")
        elif name in ok_cases and rc != 0:
            problems.append(f"failed: {err[-200:]}")
        elif name not in ok_cases and (rc == 0 or not err):
            problems.append(f"status {rc} with message {err[-100:]!r}")
        report(not problems, "pg_mln: " + name, "; ".join(problems))


def main():
    role, pgmln, tmp = sys.argv[1:4]
    sql_cases(role)
    cli_cases(role, pgmln, tmp)
    print(f"# {passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 else 1)


if __name__ == "__main__":
    main()
