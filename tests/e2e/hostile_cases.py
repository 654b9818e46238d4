"""The hostile inputs of tests/e2e/hostile.sh (issue #59), as (name, sql,
expect) triples: expect is 'error' (the statement must fail with an error,
the server stays up and nothing changes), 'ok' (it must succeed) or 'any'
(either; the server stays up, and on an error nothing changes).  They run
as a plain role, program `base` grounded beside them, under a one-minute
statement_timeout and mln.cpu_memory_limit = 1 GB."""


def q(s):
    """A dollar-quoted SQL literal."""
    tag = "$h$"
    assert tag not in s
    return tag + s + tag


def deep(open_, close, n, inner):
    return open_ * n + inner + close * n


SMOKE = """*Friends(person, person)
Smokes(person)
Cancer(person)
0.5  !Smokes(a1) v Cancer(a1)
0.4  !Friends(a1,a2) v !Smokes(a1) v Smokes(a2)
"""


def datalog_cases():
    c = []
    for n in (300, 5000, 10000, 100000):
        prog = "q(1). p(Y) :- q(X), Y = " + deep("(", ")", n, "X") + "."
        c.append((f"datalog: {n} nested parentheses", f"SELECT * FROM mln.datalog_explain({q(prog)})", "error"))
        c.append((f"datalog run: {n} nested parentheses", f"SELECT mln.datalog({q(prog)}, 'public')", "error"))
    for n in (300, 10000, 200000):
        prog = "q(1). p(Y) :- q(X), Y = " + "-" * n + "X."
        c.append((f"datalog: {n} unary minus", f"SELECT * FROM mln.datalog_explain({q(prog)})", "error"))
    for n in (2000, 100000):
        prog = "q(1). p(Y) :- q(X), Y = X" + " + X" * n + "."
        c.append((f"datalog: a sum of {n} terms", f"SELECT * FROM mln.datalog_explain({q(prog)})", "error"))
        prog = "q(1). p(X) :- q(X), X < X" + " * X" * n + "."
        c.append((f"datalog: a product of {n} factors", f"SELECT * FROM mln.datalog_explain({q(prog)})", "error"))
    for n in (20000, 100000):
        prog = "p0(1).\n" + "".join(f"p{i + 1}(X) :- p{i}(X).\n" for i in range(n))
        c.append((f"datalog: a chain of {n} relations", f"SELECT count(*) FROM mln.datalog_explain({q(prog)})", "any"))
    prog = "p0(1).\n" + "".join(f"p{i + 1}(X) :- p{i}(X), !p{(i + 2) % 5000}(X).\n" for i in range(5000))
    c.append(("datalog: a negation cycle through 5000 relations", f"SELECT * FROM mln.datalog_explain({q(prog)})", "error"))
    bad = [
        ("unterminated string", 'p("abc).'),
        ("unterminated rule", "p(1) :- q(1)"),
        ("no arguments", "p()."),
        ("arity mismatch", "p(1). p(1, 2)."),
        ("integer out of range", "p(99999999999999999999)."),
        ("aggregate in a body", "q(1). p(X) :- q(count(X))."),
        ("unbound head variable", "q(1). p(X, Y) :- q(X)."),
        ("negation of an unbound variable", "q(1). p(X) :- q(X), !r(Y)."),
        ("negation cycle", "q(1). p(X) :- q(X), !r(X). r(X) :- q(X), !p(X)."),
        ("a stray token", "p(1) ? q(2)."),
        ("an unknown directive", ".output p"),
        ("a directive without a name", ".decl"),
        ("a bad column type", ".decl p(a float)"),
        ("input from a missing table", ".input e from no_such_table\np(X) :- e(X, _)."),
        ("input from another role's table", ".input e from hostile_admin.secret\np(X) :- e(X)."),
        ("input with a missing column", ".input e(a int, b int) from hostile_own.t(a, nope)\np(X) :- e(X, _)."),
        ("input with too many columns", ".input e(a int) from hostile_own.t(a, b, a)\np(X) :- e(X)."),
        ("a quoted name with a quote", '.input e from "t""; DROP TABLE hostile_own.t; --"\np(X) :- e(X, _).'),
        ("an empty program", ""),
        ("only a comment", "// nothing"),
        ("a NUL-like escape", 'p("a\\u0000b").'),
        ("an aggregate over _", "q(1). p(count(_)) :- q(_)."),
        ("count of an unknown var", "q(1). p(count(Z)) :- q(X)."),
        ("division by zero", "q(1). p(Y) :- q(X), Y = X / 0."),
        ("modulo by zero", "q(1). p(Y) :- q(X), Y = X % 0."),
        ("overflow", "q(2147483647). p(Y) :- q(X), Y = X + X."),
        ("a string in arithmetic", 'q("a"). p(Y) :- q(X), Y = X + 1.'),
        ("text against int", 'q(1). r("a"). p(X) :- q(X), r(X).'),
        ("a long name", "p" + "x" * 70 + "(1)."),
        ("10^5 facts on one line", " ".join(f"p({i})." for i in range(100000))),
    ]
    for name, prog in bad:
        explain_expect = "any" if name.startswith("input with") or "by zero" in name else None
        expect = "any" if name in ("an empty program", "only a comment", "overflow",
                                   "a long name", "10^5 facts on one line") else "error"
        c.append((f"datalog: {name}", f"SELECT * FROM mln.datalog_explain({q(prog)})", explain_expect or expect))
        c.append((f"datalog run: {name}", f"SELECT mln.datalog({q(prog)}, 'hostile_out')", expect))
    c.append(("datalog: a target schema that does not exist", "SELECT mln.datalog('p(1).', 'no_such_schema')", "error"))
    c.append(("datalog: a target schema of another role", "SELECT mln.datalog('p(1).', 'hostile_admin')", "error"))
    c.append(("datalog: a target relation that is a view",
              "SELECT mln.datalog('v(1).', 'hostile_own')", "error"))
    c.append(("datalog: a cross product of 10^8 rows stopped by statement_timeout",
              "SET statement_timeout = '2s'; SELECT mln.datalog($$.input e(a int, b int) from hostile_own.big\n"
              "p(X, Y) :- e(X, _), e(Y, _).$$, 'hostile_out', '{\"max_rows\": 0}')", "error"))
    c.append(("datalog_query: an unknown relation", "SELECT * FROM mln.datalog_query('p(1).', 'nope') AS t(a int)", "error"))
    c.append(("datalog_query: a wrong column list", "SELECT * FROM mln.datalog_query('p(1).', 'p') AS t(a text, b int)", "error"))
    c.append(("datalog options: unknown", "SELECT mln.datalog('p(1).', 'hostile_out', '{\"nope\": 1}')", "error"))
    c.append(("datalog options: a string max_rows", "SELECT mln.datalog('p(1).', 'hostile_out', '{\"max_rows\": \"x\"}')", "error"))
    c.append(("datalog options: negative max_rows", "SELECT mln.datalog('p(1).', 'hostile_out', '{\"max_rows\": -1}')", "error"))
    c.append(("datalog options: not an object", "SELECT mln.datalog('p(1).', 'hostile_out', '[1, 2]')", "error"))
    c.append(("datalog: NULL program", "SELECT mln.datalog(NULL, 'hostile_out')", "any"))
    return c


def mln_cases():
    c = []
    for n in (60, 250, 10000, 100000):
        prog = "Smokes(person)\nCancer(person)\n1 " + deep("(", ")", n, "Smokes(x)") + " => Cancer(x)\n"
        c.append((f"mln: {n} nested parentheses", f"SELECT mln.create_program('h_deep', {q(prog)})",
                  "ok" if n < 100 else "error"))
    for n in (10000, 100000):
        prog = "Smokes(person)\n1 " + "!" * n + "Smokes(x)\n"
        c.append((f"mln: {n} negations", f"SELECT mln.create_program('h_neg', {q(prog)})", "any"))
    prog = "Smokes(person)\nCancer(person)\n1 " + " v ".join(["Smokes(x)"] * 100000) + "\n"
    c.append(("mln: a clause of 10^5 literals", f"SELECT mln.create_program('h_long', {q(prog)})", "any"))
    prog = "Smokes(person)\nCancer(person)\n1 " + " <=> ".join(["Smokes(x)"] * 300) + "\n"
    c.append(("mln: 300 <=> in a row", f"SELECT mln.create_program('h_eqv', {q(prog)})", "error"))
    prog = "P(t)\n1 " + " v ".join(f"(P(a{i}) ^ P(b{i}))" for i in range(40)) + "\n"
    c.append(("mln: a CNF that explodes (2^40 clauses)", f"SELECT mln.create_program('h_cnf', {q(prog)})", "error"))
    bad = [
        ("an unknown predicate", "Smokes(person)\n1 Drinks(x)\n"),
        ("a weight of NaN", "Smokes(person)\nNaN Smokes(x)\n"),
        ("a weight of 1e400", "Smokes(person)\n1e400 Smokes(x)\n"),
        ("a weight of -inf", "Smokes(person)\n-inf Smokes(x)\n"),
        ("an arity mismatch", "Smokes(person)\n1 Smokes(x, y)\n"),
        ("a duplicate declaration", "Smokes(person)\nSmokes(person, person)\n1 Smokes(x)\n"),
        ("a type clash", "Smokes(person)\nAge(person, int_)\n1 Age(x, y) => Smokes(y) ^ y > 3\n"),
        ("a stray character", "Smokes(person)\n1 Smokes(x) @\n"),
        ("an unterminated string", 'Smokes(person)\n1 Smokes("Anna)\n'),
        ("an unterminated comment", "Smokes(person)\n/* 1 Smokes(x)\n"),
        ("a bare weight", "Smokes(person)\n0.5\n"),
        ("a hard rule and its hard opposite", "Smokes(person)\nSmokes(Anna).\n!Smokes(Anna).\n"),
        ("a hard rule that is a weight", "Smokes(person)\n1 Smokes(x).\n"),
        ("only declarations", "Smokes(person)\n"),
        ("nothing", ""),
        ("an existential over nothing", "Smokes(person)\n1 EXIST Smokes(x)\n"),
        ("a quoted quote", 'Smokes(person)\n1 Smokes("a\\"b")\n'),
        ("a NUL escape in a constant", 'Smokes(person)\n1 Smokes("a\\u0000b")\n'),
        ("a huge predicate name", "P" + "x" * 100000 + "(t)\n1 P" + "x" * 100000 + "(x)\n"),
        ("a predicate named like SQL", 'Drop_table(t)\n1 Drop_table(x)\n'),
        ("10^4 predicates", "".join(f"P{i}(t)\n" for i in range(10000)) + "1 P0(x)\n"),
        ("a built-in called wrongly", "Age(person, int_)\n1 Age(x, y) ^ sqrt(y, y) > 1\n"),
        ("an unknown built-in", "Age(person, int_)\n1 Age(x, y) ^ nope(y) > 1\n"),
        ("integer overflow in a condition", "Age(person, int_)\n1 Age(x, y) ^ y > 99999999999999999999999\n"),
        ("a condition nested 10^4 deep", "Age(person, int_)\n1 Age(x, y) ^ " + deep("[", "]", 10000, "y > 1") + "\n"),
        ("arithmetic nested 10^4 deep", "Age(person, int_)\n1 Age(x, y) ^ y > " + deep("(", ")", 10000, "1") + "\n"),
        ("a condition of 10^5 terms", "Age(person, int_)\n1 Age(x, y) ^ [y > 1" + " + 1" * 100000 + "]\n"),
    ]
    for name, prog in bad:
        expect = "any" if name in ("only declarations", "nothing", "a quoted quote", "a predicate named like SQL",
                                   "10^4 predicates", "a weight of 1e400", "a hard rule that is a weight",
                                   "a bare weight", "an existential over nothing") else "error"
        c.append((f"mln: {name}", f"SELECT mln.create_program('h_bad', {q(prog)})", expect))
    for name in ("", "a\"b", "x'; DROP TABLE hostile_own.t; --", "n" * 100, "Base", "base", "UPPER", "white space",
                 "..", "a/b", "mln", "pg_catalog"):
        c.append((f"create_program: the name {name[:20]!r}",
                  f"SELECT mln.create_program({q(name)}, {q(SMOKE)})", "any"))
    c.append(("create_program: NULL text", "SELECT mln.create_program('h_null', NULL)", "any"))
    c.append(("create_program: the name of an existing program", f"SELECT mln.create_program('base', {q(SMOKE)})", "error"))
    c.append(("create_program: a program of another role", f"SELECT mln.create_program('admins', {q(SMOKE)})", "error"))
    c.append(("drop_program: another role's program", "SELECT mln.drop_program('admins')", "error"))
    c.append(("drop_program: a program that does not exist", "SELECT mln.drop_program('nope')", "error"))
    return c


def evidence_cases():
    c = []
    bad = [
        ("an unknown predicate", "Drinks(Anna)"),
        ("an arity mismatch", "Smokes(Anna, Bob)"),
        ("a prior of 2", "2 Smokes(Anna)"),
        ("a prior of -1", "-1 Smokes(Anna)"),
        ("a prior of NaN", "NaN Smokes(Anna)"),
        ("an unterminated atom", "Smokes(Anna"),
        ("a stray token", "Smokes(Anna) ^"),
        ("a deep nesting", deep("(", ")", 10000, "Smokes(Anna)")),
        ("10^5 negations", "!" * 100000 + "Smokes(Anna)"),
        ("an unterminated string", 'Smokes("Anna)'),
        ("a huge constant", "Smokes(" + "A" * 1000000 + ")"),
        ("a truth and its negation", "Smokes(Anna)\n!Smokes(Anna)"),
        ("a line of 10^5 atoms", " ".join(f"Smokes(P{i})" for i in range(100000))),
    ]
    for name, ev in bad:
        expect = "any" if name in ("a truth and its negation", "a huge constant", "a line of 10^5 atoms") else "error"
        c.append((f"load_evidence: {name}", f"SELECT mln.load_evidence('base', {q(ev)})", expect))
    c.append(("load_evidence: another role's program", "SELECT mln.load_evidence('admins', 'Smokes(Anna)')", "error"))
    c.append(("load_evidence: no program", "SELECT mln.load_evidence('nope', 'Smokes(Anna)')", "error"))
    qs = [
        ("an unknown predicate", "Drinks(x)"),
        ("an arity mismatch", "Cancer(x, y)"),
        ("deep parentheses", deep("(", ")", 10000, "Cancer(x)")),
        ("a stray token", "Cancer(x) v"),
        ("an empty query", ""),
        ("an unterminated atom", "Cancer(x"),
    ]
    for name, text in qs:
        c.append((f"set_query: {name}", f"SELECT mln.set_query('base', {q(text)})", "error"))
    c.append(("set_query: another role's program", "SELECT mln.set_query('admins', 'Cancer(x)')", "error"))
    binds = [
        ("a missing relation", "SELECT mln.bind_predicate('base', 'Smokes', 'no_such', ARRAY['a'], NULL)"),
        ("another role's table", "SELECT mln.bind_predicate('base', 'Smokes', 'hostile_admin.secret', ARRAY['a'], NULL)"),
        ("a missing column", "SELECT mln.bind_predicate('base', 'Smokes', 'hostile_own.t', ARRAY['nope'], NULL)"),
        ("too many columns", "SELECT mln.bind_predicate('base', 'Smokes', 'hostile_own.t', ARRAY['a', 'b'], NULL)"),
        ("an injected column", "SELECT mln.bind_predicate('base', 'Smokes', 'hostile_own.t', ARRAY['a); DROP TABLE hostile_own.t; --'], NULL)"),
        ("a truth column that is no boolean", "SELECT mln.bind_predicate('base', 'Smokes', 'hostile_own.t', ARRAY['a'], 'b')"),
        ("an unknown predicate", "SELECT mln.bind_predicate('base', 'Drinks', 'hostile_own.t', ARRAY['a'], NULL)"),
        ("NULL columns", "SELECT mln.bind_predicate('base', 'Smokes', 'hostile_own.t', NULL, NULL)"),
    ]
    for name, sql in binds:
        c.append((f"bind_predicate: {name}", sql, "error"))
    return c


def ground_and_job_cases():
    c = []
    c.append(("ground: a device that does not exist", "SELECT mln.ground('base', 'tpu')", "error"))
    c.append(("ground: another role's program", "SELECT mln.ground('admins')", "error"))
    c.append(("ground: an unknown closed-world predicate", "SELECT mln.ground('base', closed_world => ARRAY['Drinks'])", "error"))
    c.append(("ground: cancelled by statement_timeout",
              "SET statement_timeout = '1ms'; SELECT mln.ground('base')", "any"))
    for name, opts in [
        ("an unknown option", '{"nope": 1}'),
        ("threads 100000", '{"threads": 100000}'),
        ("threads -1", '{"threads": -1}'),
        ("threads 1.5", '{"threads": 1.5}'),
        ("a timeout of -1", '{"timeout": -1}'),
        ("a timeout of 1e400", '{"timeout": 1e400}'),
        ("max_flips as a string", '{"max_flips": "many"}'),
        ("a seed of -1", '{"seed": -1}'),
        ("a seed beyond 64 bits", '{"seed": 999999999999999999999999}'),
        ("an unknown device", '{"device": "tpu"}'),
        ("an array", "[1]"),
        ("a scalar", "1"),
        ("options nested 10^4 deep", '{"a": ' + "[" * 10000 + "]" * 10000 + "}"),
        ("options nested 10^5 deep", '{"seed": ' + "[" * 100000 + "]" * 100000 + "}"),
        ("a marginal option for map", '{"samples": 10}'),
        ("partitions 0", '{"partitions": 0}'),
        ("partitions 100000", '{"partitions": 100000}'),
        ("an option of 10^6 characters", '{"solver": "' + "x" * 1000000 + '"}'),
        ("a NUL escape", '{"solver": "a\\u0000b"}'),
        ("gap_tolerance 2", '{"gap_tolerance": 2}'),
        ("ilp_seconds -5", '{"ilp_seconds": -5}'),
    ]:
        c.append((f"infer map: {name}", f"SELECT mln.infer('base', 'map', {q(opts)})", "error"))
    for name, opts in [
        ("samples 0", '{"samples": 0}'), ("samples 1e30", '{"samples": 1e30}'),
        ("burn_in -1", '{"burn_in": -1}'), ("mcsat_param 2", '{"mcsat_param": 2}'),
        ("an unknown option", '{"nope": true}'),
    ]:
        c.append((f"infer marginal: {name}", f"SELECT mln.infer('base', 'marginal', {q(opts)})", "error"))
    for task in ("nope", "", "learn", "MAP; DROP TABLE hostile_own.t"):
        c.append((f"infer: the task {task!r}", f"SELECT mln.infer('base', {q(task)})", "error"))
    c.append(("infer: another role's program", "SELECT mln.infer('admins', 'map')", "error"))
    c.append(("infer: no program", "SELECT mln.infer('nope', 'map')", "error"))
    for name, opts in [("an unknown option", '{"nope": 1}'), ("iterations -1", '{"iterations": -1}'),
                       ("a bad method", '{"method": "magic"}'), ("samples 1.5", '{"samples": 1.5}')]:
        c.append((f"learn_weights: {name}", f"SELECT mln.learn_weights('base', {q(opts)})", "error"))
    c.append(("learn_weights: another role's program", "SELECT mln.learn_weights('admins')", "error"))
    c.append(("restore_weights: a version that does not exist", "SELECT mln.restore_weights('base', 999)", "error"))
    c.append(("restore_weights: another role's program", "SELECT mln.restore_weights('admins', 1)", "error"))
    c.append(("wait: another role's job", "SELECT mln.wait((SELECT min(id) FROM mln.jobs), interval '1 s')", "any"))
    c.append(("wait: a job that does not exist", "SELECT mln.wait(-1, interval '1 s')", "error"))
    c.append(("cancel: a job that does not exist", "SELECT mln.cancel(-1)", "error"))
    c.append(("jobs: a direct insert for another role's program",
              "INSERT INTO mln.jobs(program, task) VALUES ('admins', 'map')", "error"))
    c.append(("jobs: a direct insert as another owner",
              "INSERT INTO mln.jobs(program, task, owner) VALUES ('base', 'map', 'postgres')", "error"))
    c.append(("jobs: a direct insert with bad options",
              "INSERT INTO mln.jobs(program, task, options) VALUES ('base', 'map', '{\"threads\": 100000}')", "error"))
    c.append(("programs: changing another role's row", "UPDATE mln.programs SET owner = current_user::regrole WHERE name = 'admins'", "any"))
    c.append(("map: another role's program", "SELECT * FROM mln.map('admins')", "error"))
    c.append(("marginals: a program never solved", "SELECT * FROM mln.marginals('base')", "any"))
    c.append(("ground_clauses: no program", "SELECT * FROM mln.ground_clauses('nope')", "error"))
    c.append(("explain_ground: another role's program", "SELECT * FROM mln.explain_ground('admins')", "error"))
    c.append(("program_state: no program", "SELECT mln.program_state('nope')", "any"))
    c.append(("solve: inside a transaction block", "BEGIN; CALL mln.solve('base'); COMMIT", "error"))
    return c


def operator_cases():
    c = []
    for name, sql in [
        ("select from a missing table", "SELECT mln.gpu_select('no_such', 'a > 1', 'hostile_out.s1')"),
        ("select with an injected filter", "SELECT mln.gpu_select('hostile_own.t', 'a > 1; DROP TABLE hostile_own.t', 'hostile_out.s2')"),
        ("select with a filter of a function", "SELECT mln.gpu_select('hostile_own.t', 'pg_sleep(10) IS NULL', 'hostile_out.s3')"),
        ("select over another role's table", "SELECT mln.gpu_select('hostile_admin.secret', 'a > 0', 'hostile_out.s4')"),
        ("select into an existing table", "SELECT mln.gpu_select('hostile_own.t', 'a > 1', 'hostile_own.t')"),
        ("select into another role's schema", "SELECT mln.gpu_select('hostile_own.t', 'a > 1', 'hostile_admin.x')"),
        ("select of a missing column", "SELECT mln.gpu_select('hostile_own.t', 'a > 1', 'hostile_out.s5', ARRAY['nope'])"),
        ("select with a deep filter", "SELECT mln.gpu_select('hostile_own.t', " + q(deep("(", ")", 10000, "a > 1")) + ", 'hostile_out.s6')"),
        ("select on an unknown device", "SELECT mln.gpu_select('hostile_own.t', 'a > 1', 'hostile_out.s7', NULL, 'tpu')"),
        ("select of text columns", "SELECT mln.gpu_select('hostile_own.txt', 's > 1', 'hostile_out.s8')"),
        ("join on missing keys", "SELECT mln.gpu_join('hostile_own.t', 'hostile_own.t', ARRAY['x'], ARRAY['a'], 'hostile_out.j1')"),
        ("join with unequal key lists", "SELECT mln.gpu_join('hostile_own.t', 'hostile_own.t', ARRAY['a', 'b'], ARRAY['a'], 'hostile_out.j2')"),
        ("join into a quoted injection", "SELECT mln.gpu_join('hostile_own.t', 'hostile_own.t', ARRAY['a'], ARRAY['a'], 'x; DROP TABLE hostile_own.t')"),
        ("distinct of a missing column", "SELECT mln.gpu_distinct('hostile_own.t', 'hostile_out.d1', ARRAY['nope'])"),
        ("plan with a bad step", "SELECT mln.gpu_plan('hostile_own.t', ARRAY['explode'], 'hostile_out.p1')"),
        ("plan with 10^4 steps", "SELECT mln.gpu_plan('hostile_own.t', array_fill('distinct'::text, ARRAY[10000]), 'hostile_out.p2')"),
        ("plan with a deep step", "SELECT mln.gpu_plan('hostile_own.t', ARRAY[" + q("select " + deep("(", ")", 10000, "a > 1")) + "], 'hostile_out.p3')"),
    ]:
        expect = "any" if name in ("plan with 10^4 steps",) else "error"
        c.append((f"operators: {name}", sql, expect))
    return c


def problog_cases():
    c = []
    bad = [
        ("contradictory evidence", "0.5::a. evidence(\\+a). evidence(a). query(a)."),
        ("contradictory evidence (true/false)", "0.5::a. evidence(a,true). evidence(a,false). query(a)."),
        ("a probability of 2", "2::a. query(a)."),
        ("a probability of -0.5", "-0.5::a. query(a)."),
        ("annotated disjunction over 1", "0.6::a; 0.6::b. query(a)."),
        ("a negation cycle", "0.5::a. b :- \\+c, a. c :- \\+b, a. query(b)."),
        ("no query", "0.5::a."),
        ("an unknown query", "0.5::a. query(b)."),
        ("an unterminated clause", "0.5::a"),
        ("a stray token", "0.5::a ? query(a)."),
        ("an unknown directive", ".output a\n0.5::a. query(a)."),
        ("an unbound head variable", "0.5::a. p(X) :- a. query(p(1))."),
        ("an integer beyond 32 bits", "0.5::p(99999999999). query(p(1))."),
        ("deep parentheses", "0.5::a. query(" + deep("(", ")", 10000, "a") + ")."),
        ("an input table that does not exist", ".input e(a int) from no_such\n0.5::p(X) :- e(X). query(p(1))."),
        ("another role's input table", ".input e(a int) from hostile_admin.secret\n0.5::p(X) :- e(X). query(p(1))."),
        ("evidence that cannot hold", "0.5::a. b :- a. evidence(b). evidence(\\+a). query(a)."),
    ]
    for name, prog in bad:
        c.append((f"problog: {name}", f"SELECT * FROM mln.problog({q(prog)})", "error"))
        # Evidence that no sample satisfies is found by sampling: the job's.
        c.append((f"problog_job: {name}", f"SELECT mln.problog_job({q(prog)})",
                  "any" if name == "evidence that cannot hold" else "error"))
    for n in (20000, 100000):
        prog = "0.5::p0.\n" + "".join(f"p{i + 1} :- p{i}.\n" for i in range(n)) + f"query(p{n})."
        c.append((f"problog: a chain of {n} rules", f"SELECT * FROM mln.problog({q(prog)}, '{{\"samples\": 64}}')", "any"))
    for name, opts, expect in [
        ("threads 4096 (capped at the cores)", '{"threads": 4096, "samples": 2000}', "ok"),
        ("delta 1e-12 ends at max_samples", '{"delta": 1e-12, "max_samples": 5000}', "ok"),
        ("delta 1e-300 ends at max_samples", '{"delta": 1e-300, "max_samples": 5000}', "ok"),
        ("delta 0", '{"delta": 0}', "error"),
        ("delta 1", '{"delta": 1}', "error"),
        ("max_samples 0", '{"max_samples": 0}', "error"),
        ("samples -1", '{"samples": -1}', "error"),
        ("threads 5000", '{"threads": 5000}', "error"),
        ("an unknown option", '{"nope": 1}', "error"),
        ("a device that does not exist", '{"device": "tpu"}', "error"),
        ("seed as text", '{"seed": "x"}', "error"),
    ]:
        c.append((f"problog options: {name}", f"SELECT * FROM mln.problog('0.5::a. query(a).', {q(opts)})", expect))
    c.append(("problog_job: delta 1e-12 queued", "SELECT mln.problog_job('0.5::a. query(a).', '{\"delta\": 1e-12, \"max_samples\": 1000}') > 0", "ok"))
    return c


def rules_cases():
    c = []
    for name, sql in [
        ("a missing positives table", "SELECT * FROM mln.learn_rules('p', 'no_such', NULL, ARRAY['hostile_own.t'])"),
        ("another role's table", "SELECT * FROM mln.learn_rules('p', 'hostile_admin.secret', NULL, ARRAY['hostile_own.t'])"),
        ("a missing background table", "SELECT * FROM mln.learn_rules('p', 'hostile_own.t', NULL, ARRAY['no_such'])"),
        ("an unknown option", "SELECT * FROM mln.learn_rules('p', 'hostile_own.t', NULL, ARRAY['hostile_own.t'], '{\"nope\": 1}')"),
        ("max_body -1", "SELECT * FROM mln.learn_rules('p', 'hostile_own.t', NULL, ARRAY['hostile_own.t'], '{\"max_body\": -1}')"),
        ("beam 10^9", "SELECT * FROM mln.learn_rules('p', 'hostile_own.t', NULL, ARRAY['hostile_own.t'], '{\"beam\": 1000000000}')"),
        ("an injected table name", "SELECT * FROM mln.learn_rules('p', 'hostile_own.t; DROP TABLE hostile_own.t', NULL, ARRAY['hostile_own.t'])"),
        ("a text positives table", "SELECT * FROM mln.learn_rules('p', 'hostile_own.txt', NULL, ARRAY['hostile_own.t'])"),
        ("a program target that does not exist", "SELECT * FROM mln.learn_rules_from('base', 'Drinks')"),
        ("another role's program", "SELECT * FROM mln.learn_rules_from('admins', 'Cancer')"),
        ("a job for a missing target", "SELECT mln.learn_rules_job('base', 'Drinks')"),
        ("a job with a bad option", "SELECT mln.learn_rules_job('base', 'Cancer', '{\"min_pos\": -3}')"),
        ("add rules of a job that does not exist", "SELECT mln.add_learned_rules('base', -1)"),
        ("add rules to another role's program", "SELECT mln.add_learned_rules('admins', 1)"),
        ("a memory-hungry search bounded by mln.cpu_memory_limit",
         "SELECT * FROM mln.learn_rules('gp', 'hostile_own.gp_pos', NULL, ARRAY['hostile_own.mid1', 'hostile_own.mid2'], "
         "'{\"max_body\": 3, \"min_pos\": 1}')"),
    ]:
        expect = "any" if "memory-hungry" in name or name in ("beam 10^9", "a text positives table") else "error"
        c.append((f"learn_rules: {name}", sql, expect))
    return c


def all_cases():
    return (datalog_cases() + mln_cases() + evidence_cases() + ground_and_job_cases() + operator_cases()
            + problog_cases() + rules_cases())
