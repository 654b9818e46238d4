#!/usr/bin/env python3
"""The ground network a `pg_mln -keepData` run left in its schema, as old-format WCNF for
NuWLS (issue #39; encoding as in docs/peers.md), and NuWLS's answer scored on the network.

  wcnf_export.py export SCHEMA PREFIX     writes PREFIX.wcnf, PREFIX.nodummy.wcnf (the same without
                                          the dummy hard clause) and PREFIX.net (the network, JSON)
  wcnf_export.py score PREFIX NUWLS_LOG   prints "COST SECONDS": Tuffy's cost of NuWLS's best `v`
                                          assignment in the original weights, and the CPU seconds
                                          of its last `o` line (time to its best); "- -" if none
  wcnf_export.py map SCHEMA               Tuffy's cost of the kept MAP answer (<schema>._map, true
                                          atoms): checks the scoring against the CLI's cost

The server is psql's (PG* environment).  <schema>._clauses holds chunks of clauses: clause i of
a chunk is lits[offsets[i]:offsets[i+1]] (0-based offsets), signed atom ids, weight w.  Cost:
the weight of every violated clause of w > 0 plus |w| of every satisfied clause of w < 0 (hard
clauses are only large weights here, and stay finite).  WCNF weights are round(100 |w|); a
w < 0 clause is its negated unit, or with several literals an aux variable: soft (!aux) of
weight |w| and hard (aux v !l) for each literal l.  One dummy hard clause on a fresh variable
keeps NuWLS's clause weighting on (it switches it off when a file has none; docs/peers.md):
PREFIX.wcnf has it, PREFIX.nodummy.wcnf not.  top exceeds the sum of soft weights.
"""
import json
import subprocess
import sys

SCALE = 100


def psql(sql):
    out = subprocess.run(["psql", "-AtX", "-F", "|", "-v", "ON_ERROR_STOP=1", "-c", sql],
                         check=True, capture_output=True, text=True).stdout
    return [line.split("|") for line in out.splitlines() if line]


def arr(text, conv):
    text = text.strip("{}")
    return [conv(x) for x in text.split(",")] if text else []


def network(schema):
    """[(lits, weight)] of the schema's ground clauses, and the number of atoms."""
    clauses = []
    for offsets, lits, weights in psql(f"SELECT offsets, lits, weights FROM {schema}._clauses ORDER BY chunk"):
        o, l, w = arr(offsets, int), arr(lits, int), arr(weights, float)
        clauses += [(l[o[i]:o[i + 1]], w[i]) for i in range(len(w))]
    natoms = int(psql(f"SELECT coalesce(max(id), 0) FROM {schema}._atoms")[0][0])
    natoms = max([natoms] + [abs(x) for c, _ in clauses for x in c])
    return clauses, natoms


def cost(clauses, true):
    total = 0.0
    for lits, w in clauses:
        sat = any((x > 0) == (abs(x) in true) for x in lits)
        if (w > 0 and not sat) or (w < 0 and sat):
            total += abs(w)
    return total


def export(schema, prefix):
    clauses, nvars = network(schema)
    soft, hard = [], []
    for lits, w in clauses:
        iw = round(abs(w) * SCALE)
        if iw == 0 or not lits:
            continue
        if w > 0:
            soft.append((iw, lits))
        elif len(lits) == 1:
            soft.append((iw, [-lits[0]]))
        else:
            nvars += 1
            soft.append((iw, [-nvars]))
            hard += [[nvars, -x] for x in lits]
    top = sum(w for w, _ in soft) + 1
    for name, extra in ((".wcnf", [[nvars + 1]]), (".nodummy.wcnf", [])):
        n = nvars + len(extra)
        with open(prefix + name, "w") as f:
            f.write(f"p wcnf {n} {len(soft) + len(hard) + len(extra)} {top}\n")
            for w, lits in soft:
                f.write(f"{w} {' '.join(map(str, lits))} 0\n")
            for lits in hard + extra:
                f.write(f"{top} {' '.join(map(str, lits))} 0\n")
    with open(prefix + ".net", "w") as f:
        json.dump(clauses, f)


def score(prefix, log):
    with open(prefix + ".net") as f:
        clauses = json.load(f)
    o_cost = o_time = v = None
    with open(log) as f:
        for line in f:
            p = line.split()
            if len(p) == 3 and p[0] == "o":
                o_cost, o_time = int(p[1]), float(p[2])
            elif len(p) == 2 and p[0] == "v":
                v = p[1]
    if o_cost is None:
        print("- -")
    elif v is None:  # NuWLS stops without a `v` line once it reaches cost 0
        print(f"{o_cost / SCALE:.2f} {o_time:.2f}")
    else:
        true = {i + 1 for i, b in enumerate(v) if b == "1"}
        print(f"{cost(clauses, true):.2f} {o_time:.2f}")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "export" and len(sys.argv) == 4:
        export(sys.argv[2], sys.argv[3])
    elif mode == "score" and len(sys.argv) == 4:
        score(sys.argv[2], sys.argv[3])
    elif mode == "map" and len(sys.argv) == 3:
        clauses, _ = network(sys.argv[2])
        true = {int(r[0]) for r in psql(f"SELECT atom FROM {sys.argv[2]}._map WHERE truth")}
        print(f"{cost(clauses, true):.2f}")
    else:
        sys.exit(__doc__)
