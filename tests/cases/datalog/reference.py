#!/usr/bin/env python3
"""The Datalog cases' expected outputs from an independent engine: each
case's reference.sql (standard SQL, WITH RECURSIVE where it recurses) runs in
SQLite over the case's <rel>.facts, loaded as tables with columns c1, c2, ...
(integer where every value is one, else text), and each '-- rel' block's rows
must equal <rel>.csv (sorted, tab-separated).  --write writes them instead.
Usage: reference.py [--write] [CASE_DIR...] (default: every case here)."""
import glob
import os
import sqlite3
import sys


def load(db, case):
    for f in sorted(glob.glob(os.path.join(case, "*.facts"))):
        rel = os.path.basename(f)[:-6]
        rows = [line.rstrip("\n").split("\t") for line in open(f, encoding="utf-8") if line.strip("\n")]
        if not rows:
            db.execute(f'CREATE TABLE "{rel}" (c1 INTEGER)')  # an empty input: its type does not matter here
            continue
        width = max(len(r) for r in rows)
        ints = [all(len(r) > i and r[i].lstrip("-").isdigit() for r in rows) for i in range(width)]
        cols = ", ".join(f"c{i + 1} {'INTEGER' if ints[i] else 'TEXT'}" for i in range(width))
        db.execute(f'CREATE TABLE "{rel}" ({cols})')
        for r in rows:
            db.execute(f'INSERT INTO "{rel}" VALUES ({", ".join("?" * width)})',
                       [int(v) if ints[i] else v for i, v in enumerate(r)])


def blocks(sql):
    rel, text = None, []
    for line in sql.splitlines():
        if line.startswith("-- "):
            if rel:
                yield rel, "\n".join(text)
            rel, text = line[3:].strip(), []
        else:
            text.append(line)
    if rel:
        yield rel, "\n".join(text)


def main():
    args = sys.argv[1:]
    write = "--write" in args
    cases = [a for a in args if a != "--write"] or sorted(
        os.path.dirname(p) for p in glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "*", "reference.sql")))
    bad = 0
    for case in cases:
        db = sqlite3.connect(":memory:")
        load(db, case)
        for rel, sql in blocks(open(os.path.join(case, "reference.sql"), encoding="utf-8").read()):
            rows = sorted(set("\t".join(str(v) for v in row) for row in db.execute(sql)))
            text = "".join(r + "\n" for r in rows)
            path = os.path.join(case, rel + ".csv")
            if write:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
            elif not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
                print(f"{path}: differs from reference.sql ({len(rows)} rows)")
                bad = 1
        print(f"{os.path.basename(case)}: {'written' if write else 'checked'}")
    sys.exit(bad)


if __name__ == "__main__":
    main()
