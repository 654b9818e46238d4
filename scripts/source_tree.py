"""The C++ and CUDA sources the tree checks read (check_layering.py,
check_sizes.py), and the report they print."""
import os
import re

SOURCES = re.compile(r"\.(c|cc|cpp|h|hpp|cu|cuh)$")


def sources(root, tops):
    """(path relative to root, path) of every source file under the folders `tops`."""
    for top in tops:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if SOURCES.search(name):
                    path = os.path.join(dirpath, name)
                    yield os.path.relpath(path, root), path


def report(problems, summary):
    """Prints each problem and the summary line; the exit status."""
    for p in problems:
        print(p)
    print(summary)
    return 1 if problems else 0
