#!/usr/bin/env bash
# Rule learning on the command line (docs/rules.md): pg_mln -learnrules PRED
# learns from the evidence file (PRED's true atoms positive, its false ones
# negative, the other predicates' true atoms the background) and writes the
# rules with their coverage; -ruleOptions passes mln.learn_rules_from's
# options; bad flags are refused before anything runs.
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
dropdb "$PGDATABASE"
finish
