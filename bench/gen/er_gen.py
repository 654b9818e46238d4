#!/usr/bin/env python3
"""The entity-resolution workload of issues #62 and #63: records of people,
several per entity, with typos in the names and some changed zips, and the
MLN program that matches them.  Seeded: the same arguments print the same
rows.

  er_gen.py records N [SEED] [SYLLABLES]
                               N records as tab-separated rows id, eid, name, zip
                               (COPY records FROM ...); eid is the true entity;
                               names of SYLLABLES syllables (default 3: at 1,500
                               records about 6,100 atoms and 42,000 clauses, the
                               shape of issue #62's program; 2: a denser variant,
                               600,000 clauses)
  er_gen.py sql                the tables' and views' SQL: records, the views sim
                               (same first letter, levenshtein <= 1) and samezip
                               (same zip and first two letters), from Debian's
                               postgresql-15 contrib (fuzzystrmatch)
  er_gen.py program            the MLN program (Sim and SameZip bound to the views)
  er_gen.py bind               the SQL that makes it program 'er' over the views
                               (CREATE EXTENSION pg_mln first), query Same(x, y)

Entities: about N / 3, each with 1 to 5 records (mean 3).  A record copies its
entity's name with probability 0.6, else one edit (a letter replaced, dropped
or doubled, never the first); its zip is the entity's with probability 0.85,
else another.  Names are syllables from a fixed list, so distinct
entities also collide (the matcher's false positives).
"""
import random
import sys

SYLLABLES = ["an", "ber", "ca", "dor", "el", "fin", "gra", "hal", "is", "jor", "ka", "lin", "mar", "nor",
             "ol", "per", "qui", "ros", "sal", "tor", "ul", "ver", "wil", "xan", "yor", "zel"]
LETTERS = "abcdefghijklmnopqrstuvwxyz"

SQL = """CREATE EXTENSION IF NOT EXISTS fuzzystrmatch;
CREATE TABLE records (id text PRIMARY KEY, eid int NOT NULL, name text NOT NULL, zip text NOT NULL);
CREATE VIEW sim AS
  SELECT a.id AS a, b.id AS b FROM records a JOIN records b
      ON left(a.name, 1) = left(b.name, 1) AND a.id <> b.id AND levenshtein(a.name, b.name) <= 1;
CREATE VIEW samezip AS
  SELECT a.id AS a, b.id AS b FROM records a JOIN records b
      ON a.zip = b.zip AND left(a.name, 2) = left(b.name, 2) AND a.id <> b.id;
"""

PROGRAM = """*Sim(rec, rec)
*SameZip(rec, rec)
Same(rec, rec)
2.0  Sim(a, b) => Same(a, b)
1.0  SameZip(a, b) => Same(a, b)
-1.5 Same(a, b)
3.0  Same(a, b), Same(b, c) => Same(a, c)
Same(a, b) => Same(b, a).
"""


def typo(rng, name):
    i = rng.randrange(1, len(name))
    kind = rng.randrange(3)
    if kind == 0:
        return name[:i] + rng.choice(LETTERS.replace(name[i], "")) + name[i + 1:]
    if kind == 1 and len(name) > 3:
        return name[:i] + name[i + 1:]
    return name[:i] + name[i] + name[i:]


def records(n, seed, syllables=3):
    rng = random.Random(seed)
    out = []
    eid = 0
    while len(out) < n:
        eid += 1
        name = "".join(rng.choice(SYLLABLES) for _ in range(syllables))
        zip_code = "%05d" % rng.randrange(100000)
        for _ in range(1 + rng.randrange(5)):
            if len(out) == n:
                break
            rname = name if rng.random() < 0.6 else typo(rng, name)
            rzip = zip_code if rng.random() < 0.85 else "%05d" % rng.randrange(100000)
            out.append(("r%d" % (len(out) + 1), eid, rname, rzip))
    return out


def main(argv):
    if len(argv) >= 2 and argv[0] == "records":
        for r in records(int(argv[1]), int(argv[2]) if len(argv) > 2 else 1, int(argv[3]) if len(argv) > 3 else 3):
            print("\t".join(str(x) for x in r))
    elif argv[:1] == ["sql"]:
        sys.stdout.write(SQL)
    elif argv[:1] == ["program"]:
        sys.stdout.write(PROGRAM)
    elif argv[:1] == ["bind"]:
        sys.stdout.write("CREATE EXTENSION IF NOT EXISTS pg_mln;\n"
                         "SELECT mln.create_program('er', $prog$" + PROGRAM + "$prog$);\n"
                         "SELECT mln.bind_predicate('er', 'Sim', 'sim', ARRAY['a', 'b']);\n"
                         "SELECT mln.bind_predicate('er', 'SameZip', 'samezip', ARRAY['a', 'b']);\n"
                         "SELECT mln.set_query('er', 'Same(x, y)');\n")
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
