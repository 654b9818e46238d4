#!/usr/bin/env python3
"""The CP-logic benchmarks of Van Ranst and Vennekens (after Meert et al.,
ILP 2009), rebuilt from their descriptions as ProbLog programs for
mln.problog (docs/problog.md).  Prints one program to stdout.

  cplogic_gen.py bloodtype N     N persons in an ancestor tree: person k has father
                                 2k and mother 2k+1 (where <= N), the others are
                                 founders; alleles a, b, null; query: bloodtype(1, a)
  cplogic_gen.py growinghead N   0.5::ai for i = 1..N; ai causes one of a0 ..
                                 a(i-1), each 1/i; query: a0
  cplogic_gen.py growingbody N   0.5::aN; ai has probability 0.5 from each body
                                 \\+a(i+1), ..., \\+a(j-1), aj, j = i+1..N; query: a0
                                 (exactly 0.25 for N >= 1)
Nullary atoms, one predicate each (as the originals): predicate-level
stratification refuses a(I) negating a(J) of one predicate.
"""
import sys


def bloodtype(n):
    # An ancestor tree: person k's father is 2k and mother 2k + 1 where they
    # are at most n; persons without parents are founders.
    out = ["%% BLOODTYPE, %d persons" % n]
    for k in range(1, n + 1):
        if 2 * k + 1 <= n:
            out.append("father(%d, %d). mother(%d, %d)." % (2 * k, k, 2 * k + 1, k))
        else:
            out.append("founder(%d)." % k)
    out += [
        "0.3::pchrom(P, a); 0.3::pchrom(P, b); 0.4::pchrom(P, null) :- founder(P).",
        "0.3::mchrom(P, a); 0.3::mchrom(P, b); 0.4::mchrom(P, null) :- founder(P).",
        "0.5::pchrom(C, X); 0.5::pchrom(C, Y) :- father(F, C), pchrom(F, X), mchrom(F, Y).",
        "0.5::mchrom(C, X); 0.5::mchrom(C, Y) :- mother(M, C), pchrom(M, X), mchrom(M, Y).",
        "bloodtype(P, a) :- pchrom(P, a), mchrom(P, a).",
        "bloodtype(P, a) :- pchrom(P, a), mchrom(P, null).",
        "bloodtype(P, a) :- pchrom(P, null), mchrom(P, a).",
        "bloodtype(P, b) :- pchrom(P, b), mchrom(P, b).",
        "bloodtype(P, b) :- pchrom(P, b), mchrom(P, null).",
        "bloodtype(P, b) :- pchrom(P, null), mchrom(P, b).",
        "bloodtype(P, ab) :- pchrom(P, a), mchrom(P, b).",
        "bloodtype(P, ab) :- pchrom(P, b), mchrom(P, a).",
        "bloodtype(P, null) :- pchrom(P, null), mchrom(P, null).",
        "query(bloodtype(1, a)).",
    ]
    return out


def growinghead(n):
    out = ["%% GROWINGHEAD, N = %d" % n]
    for i in range(1, n + 1):
        heads = "; ".join("1/%d::a%d" % (i, j) for j in range(i))
        out.append("0.5::a%d. %s :- a%d." % (i, heads, i))
    out.append("query(a0).")
    return out


def growingbody(n):
    out = ["%% GROWINGBODY, N = %d" % n, "0.5::a%d." % n]
    for i in range(n):
        for j in range(i + 1, n + 1):
            body = ["\\+a%d" % k for k in range(i + 1, j)] + ["a%d" % j]
            out.append("0.5::a%d :- %s." % (i, ", ".join(body)))
    out.append("query(a0).")
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("bloodtype", "growinghead", "growingbody"):
        sys.exit(__doc__)
    print("\n".join(globals()[sys.argv[1]](int(sys.argv[2]))))
