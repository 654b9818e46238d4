#!/usr/bin/env python3
"""Checks the file tables of the docs against the tree: every file a table
names exists, and the tables that stand for a whole folder name every source
file in it.  A table is the one whose header's first cell is `file`; its
first column holds backquoted paths, relative to the folder the doc is
about, with {a,b} for alternatives (`base/components.{hpp,cpp}`).
Usage: check_file_tables.py [ROOT]; exits 1 and names each difference."""
import os
import re
import sys

# doc, the folder its paths are relative to, whether it names every file there.
TABLES = [
    ("docs/solver/README.md", "solver/core", True),
    ("docs/operators.md", "gpu", True),
    ("docs/options.md", "options", True),
    ("docs/grounding.md", "extension/ground", False),
]
SOURCE = re.compile(r"\.(cpp|hpp|cu|cuh|h)$")


def expand(path):
    m = re.search(r"\{([^}]*)\}", path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(","):
        out += expand(path[: m.start()] + alt.strip() + path[m.end():])
    return out


def listed(doc_text):
    names, in_table = set(), False
    for line in doc_text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
        if cells is None:
            in_table = False
            continue
        if cells[0] == "file":
            in_table = True
            continue
        if in_table and not set(cells[0]) <= set("-: "):
            for p in re.findall(r"`([^`]+)`", cells[0]):
                names.update(expand(p))
    return names


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = []
    for doc, folder, complete in TABLES:
        with open(os.path.join(root, doc)) as f:
            names = listed(f.read())
        base = os.path.join(root, folder)
        for n in sorted(names):
            if not os.path.exists(os.path.join(base, n)):
                problems.append(f"{doc}: names {folder}/{n}, which does not exist")
        if complete:
            for d, _, files in os.walk(base):
                for fn in files:
                    rel = os.path.relpath(os.path.join(d, fn), base)
                    if SOURCE.search(fn) and rel not in names:
                        problems.append(f"{doc}: does not name {folder}/{rel}")
    for p in problems:
        print(p)
    print(f"file tables: {len(problems)} difference(s) between the docs' file tables and the tree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
