#!/usr/bin/env bash
# Rule learning on the command line (docs/rules.md): pg_mln -learnrules PRED
# learns from the evidence file (PRED's true atoms positive, its false ones
# negative, the other predicates' true atoms the background) and writes the
# rules with their coverage; -ruleOptions passes mln.learn_rules_from's
# options; bad flags are refused before anything runs.  The worker's path
# (mln.learn_rules_job): the same rule, progress while it searches, and a
# cancel that stops it between depths and leaves no rule.  mln.learn_rules
# warns of an empty negatives table (a WARNING pgTAP cannot see).
source "$(dirname "$0")/lib.sh"
export PGDATABASE=mln_e2e_learn_rules
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
# A family of four generations: grandparent's true atoms are exactly the
# parent-of-parent pairs, its false atoms some other pairs.
python3 - "$tmp" <<'PY'
import random, sys
random.seed(4)
W, G = 15, 4
parent = set()
for g in range(1, G):
    for i in range(W):
        for k in range(1 + random.randint(0, 1)):
            parent.add(((g - 1) * W + random.randint(0, W - 1), g * W + i))
kids = {}
for a, b in parent:
    kids.setdefault(a, []).append(b)
gp = {(a, d) for a, b in parent for d in kids.get(b, [])}
d = sys.argv[1]
open(d + '/prog.mln', 'w').write('parent(person, person)\nmale(person)\ngrandparent(person, person)\n')
with open(d + '/evidence.db', 'w') as f:
    for a, b in sorted(parent): f.write(f'parent(P{a}, P{b})\n')
    for p in range(0, G * W, 2): f.write(f'male(P{p})\n')
    for a, b in sorted(gp): f.write(f'grandparent(P{a}, P{b})\n')
    n = 0
    while n < 2 * len(gp):
        a, b = random.randrange(G * W), random.randrange(G * W)
        if (a, b) not in gp:
            f.write(f'!grandparent(P{a}, P{b})\n'); n += 1
open(d + '/npos', 'w').write(str(len(gp)))
# A search that takes seconds: five random relations over 3,000 people and
# a target no rule explains well.
N, E = 3000, 12000
open(d + '/slow.mln', 'w').write(''.join(f'link{k}(person, person)\n' for k in range(1, 6)) + 't(person, person)\n')
with open(d + '/slow.db', 'w') as f:
    for k in range(1, 6):
        s = set()
        while len(s) < E: s.add((random.randrange(N), random.randrange(N)))
        for a, b in sorted(s): f.write(f'link{k}(P{a}, P{b})\n')
    s = set()
    while len(s) < 1200: s.add((random.randrange(N), random.randrange(N)))
    for i, (a, b) in enumerate(sorted(s)): f.write(('' if i % 4 == 0 else '!') + f't(P{a}, P{b})\n')
PY
npos=$(cat "$tmp/npos")
run() { "$PGMLN" -i "$tmp/prog.mln" -e "$tmp/evidence.db" --dsn "dbname=$PGDATABASE" "$@"; }

run -learnrules grandparent -r "$tmp/rules.txt" >"$tmp/out.log" 2>&1
check "pg_mln -learnrules exits 0" test $? -eq 0
check "it writes the planted rule, covering every true atom and no false one" \
  test "$(cat "$tmp/rules.txt")" = "grandparent(A, B) :- parent(A, C), parent(C, B).  // covers $npos true and 0 false atoms"
run -learnrules grandparent -ruleOptions '{"score": "wpll", "max_body": 2}' -r "$tmp/mln.txt" >/dev/null 2>&1
check "-ruleOptions score wpll: weighted formulas, the rule's weight positive" \
  grep -Eq '^[0-9.]+ parent\(a, c\) \^ parent\(c, b\) => grandparent\(a, b\)' "$tmp/mln.txt"
check "and the unit clause first" grep -Eq '^-[0-9.]+ grandparent\(a, b\)  //' <(head -1 "$tmp/mln.txt")
check "no program is left behind" test "$(psql -qXAt -c "SELECT count(*) FROM mln.programs")" = 0
run -learnrules uncle -r "$tmp/x.txt" >"$tmp/err" 2>&1
check "an unknown predicate is refused before any work" grep -q 'ERROR: -learnrules: unknown predicate uncle' "$tmp/err"
check "and no file is written" test ! -e "$tmp/x.txt"
run -learnrules grandparent -maxFlips 10 -r "$tmp/x.txt" >"$tmp/err" 2>&1
check "an inference flag is refused" grep -q 'applies to inference, not to -learnrules' "$tmp/err"
run -learnrules grandparent -ruleOptions '{"beam": 0}' -r "$tmp/x.txt" >"$tmp/err" 2>&1
check "a bad rule option is the server's error" \
  grep -q 'option "beam" of mln.learn_rules must be a whole number >= 1' "$tmp/err"

# An empty negatives table means no negatives were given: a WARNING with a hint.
psql -qXAt -v ON_ERROR_STOP=1 >/dev/null 2>"$tmp/warn" <<'SQL'
CREATE EXTENSION IF NOT EXISTS pg_mln;
CREATE TABLE parent(a text, b text);
INSERT INTO parent VALUES ('ann', 'bob'), ('bob', 'cy'), ('ann', 'dan'), ('dan', 'eve'), ('cy', 'fay');
CREATE TABLE gp_pos AS SELECT DISTINCT x.a, y.b FROM parent x JOIN parent y ON x.b = y.a;
CREATE TABLE gp_neg(a text, b text);
SELECT * FROM mln.learn_rules('grandparent', 'gp_pos', 'gp_neg', ARRAY['parent'], '{"device": "cpu"}');
SQL
check "mln.learn_rules warns of an empty negatives table" \
  grep -q 'WARNING:  the negative examples public.gp_neg are empty: an empty negatives table means no negatives were given' "$tmp/warn"
check "that the rules can be over-general, with a hint" \
  bash -c "grep -q 'can be over-general' '$tmp/warn' && grep -q 'HINT:  .*pass NULL as the negatives' '$tmp/warn'"
psql -qXAt -v ON_ERROR_STOP=1 >/dev/null 2>"$tmp/nowarn" \
  -c "SELECT * FROM mln.learn_rules('grandparent', 'gp_pos', NULL, ARRAY['parent'], '{\"device\": \"cpu\"}')"
check "NULL negatives (closed-world ones sampled) are not warned of" bash -c "! grep -q WARNING '$tmp/nowarn'"
psql -qXAt -v ON_ERROR_STOP=1 -c "DROP TABLE parent, gp_pos, gp_neg" >/dev/null

# The worker's path: the rule and coverage the command line wrote.
q() { psql -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
# load NAME PROGRAM EVIDENCE: a program and its evidence from files (read by psql).
load() {
  psql -qXAt -v ON_ERROR_STOP=1 -v name="$1" >/dev/null <<SQL
SET client_min_messages = error;
\\set prog \`cat $2\`
\\set ev \`cat $3\`
SELECT mln.create_program(:'name', :'prog');
SELECT mln.load_evidence(:'name', :'ev');
SQL
}
load fam "$tmp/prog.mln" "$tmp/evidence.db"
job=$(q "SELECT mln.learn_rules_job('fam', 'grandparent')")
"$WORKER" --quiet --once >/dev/null 2>&1
check "mln.learn_rules_job: the worker learns the rules" test "$(q "SELECT (mln.wait($job, interval '60 s'))->>'status'")" = done
check "the command line's rule, with its coverage" \
  test "$(q "SELECT rule || '  // covers ' || positives || ' true and ' || negatives || ' false atoms' FROM mln.learned_rules WHERE job = $job")" = "$(cat "$tmp/rules.txt")"
"$WORKER" --quiet >/dev/null 2>&1 & wsolve=$!
check "CALL mln.solve(program, 'rules', '{\"target\": ...}') queues, commits and waits" \
  test "$(psql -qXAt -c "CALL mln.solve('fam', 'rules', '{\"target\": \"grandparent\", \"score\": \"wpll\"}')" | \
          python3 -c 'import json, sys; print(json.load(sys.stdin)["status"])')" = done
kill $wsolve; wait $wsolve 2>/dev/null
check "a bad option is refused when queued" \
  bash -c "psql -qXAt -c \"SELECT mln.learn_rules_job('fam', 'grandparent', '{\\\"noise\\\": -1}')\" 2>&1 | grep -q 'option \"noise\" of mln.learn_rules_job must be a whole number >= 0'"

# Progress and cancel while the worker searches.
load slow "$tmp/slow.mln" "$tmp/slow.db"
sjob=$(q "SELECT mln.learn_rules_job('slow', 't', '{\"beam\": 40, \"max_rules\": 20, \"device\": \"cpu\"}')")
"$WORKER" --once --name rules_w >"$tmp/slow.log" 2>&1 & wpid=$!
seen=f
for _ in $(seq 1 300); do
  seen=$(q "SELECT coalesce(iterations >= 1 AND rule_depth >= 1 AND candidates > 0, false) FROM mln.job_progress WHERE id = $sjob")
  [ "$seen" = t ] && break
  sleep 0.1
done
check "progress while it searches: the rule, its depth and the candidates in mln.job_progress" test "$seen" = t
check "and in mln.wait's answer (rule searched of max_rules)" \
  test "$(q "SELECT s->>'iterations_total' = '20' AND (s->>'progress')::float8 > 0 FROM mln.wait($sjob, interval '0 s') s")" = t
q "SELECT mln.cancel($sjob)" >/dev/null
t0=$(date +%s)
for _ in $(seq 1 300); do kill -0 $wpid 2>/dev/null || break; sleep 0.1; done
check "a cancel stops the search (the worker is done within 15 s)" test $(( $(date +%s) - t0 )) -le 15
kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
check "the job stays cancelled" test "$(q "SELECT status FROM mln.jobs WHERE id = $sjob")" = cancelled
check "and wrote no rule" test "$(q "SELECT count(*) FROM mln.learned_rules WHERE job = $sjob")" = 0
check "the worker says it was cancelled" grep -q "job $sjob: cancelled" "$tmp/slow.log"
dropdb "$PGDATABASE"
finish
