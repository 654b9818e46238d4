#!/usr/bin/env python3
"""The include rules of docs/architecture.md ("Layers"), checked.

Each folder names what its files may include among the project's folders and
the database's headers; an include of anything else fails `make check`.
The solver's engine folders form a DAG by rank: a folder includes only its
own headers and those of a lower rank (base and problog 0, walk 1, bound and
marginal 2, map and learn 3, spread 4), so siblings never include each other.
options/ and format/ sit under everything and include only themselves;
gpu/ (the operator engine) includes them and nothing above.  The extension
reaches the solver's engines only for the ProbLog sampler (core/problog/),
which mln.problog runs in the backend.
Usage: check_layering.py [ROOT]; prints each offending line, exits 1 on any.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_tree import report, sources  # noqa: E402

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')

# The solver's engine folders and their ranks.
CORE_RANK = {"base": 0, "problog": 0, "walk": 1, "bound": 2, "marginal": 2, "map": 3, "learn": 3, "spread": 4}

# Project prefixes an include may start with, and which folder owns each.
PROJECT = ("mln/", "options/", "format/", "lang/", "ground/", "rules/", "pg/", "core/", "worker/", "cli/", "gen/")
# Headers that only code living with the database server may include.
SERVER = re.compile(r"^(postgres\.h|postgres_ext\.h|fmgr\.h|funcapi\.h|miscadmin\.h|"
                    r"(access|catalog|commands|executor|nodes|storage|utils|parser|optimizer|lib)/)")
LIBPQ = "libpq-fe.h"

# folder -> (project prefixes it may include, server headers?, libpq?)
LOW = {"mln/", "options/", "format/"}  # the engine and what sits under it
RULES = {
    "options": ({"options/"}, False, False),
    "format": ({"format/"}, False, False),
    "gpu": ({"mln/", "options/", "format/"}, False, False),
    "extension/lang": (LOW | {"lang/"}, False, False),
    "extension/ground": (LOW | {"lang/", "ground/", "core/problog/"}, False, False),
    "extension/rules": (LOW | {"rules/"}, False, False),
    "extension/pg": (LOW | {"lang/", "ground/", "rules/", "pg/", "core/problog/"}, True, False),
    "solver/worker": (LOW | {"core/", "rules/", "worker/"}, False, True),
    "solver/cli": (LOW | {"lang/", "core/", "worker/", "cli/"}, False, True),
}


def rule_for(rel):
    for folder, rule in RULES.items():
        if rel.startswith(folder + "/"):
            return folder, rule
    return None, None


def check_core(rel, header):
    """An engine folder's include of core/<folder>/...: same folder or lower rank."""
    own = rel.split("/")[2]
    if own not in CORE_RANK:
        return f"solver/core/{own} is not an engine folder of the DAG (add it to CORE_RANK)"
    if not header.startswith("core/"):
        if header.startswith(PROJECT) and not header.startswith(tuple(LOW)):
            return f"the solver's engines include only mln/, options/, format/ and core/, not {header}"
        if SERVER.match(header) or header == LIBPQ:
            return f"the solver's engines know nothing of PostgreSQL ({header})"
        return None
    parts = header.split("/")
    if len(parts) < 3 or parts[1] not in CORE_RANK:
        return f"{header}: write core includes with their folder (core/<folder>/<file>)"
    other = parts[1]
    if other != own and CORE_RANK[other] >= CORE_RANK[own]:
        return f"core/{own} (rank {CORE_RANK[own]}) includes core/{other} (rank {CORE_RANK[other]}): up or across the DAG"
    return None


def check_file(rel, path):
    problems = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            header = m.group(1)
            if rel.startswith("solver/core/"):
                why = check_core(rel, header)
            else:
                folder, rule = rule_for(rel)
                if rule is None:
                    continue
                prefixes, server, libpq = rule
                why = None
                if header.startswith(PROJECT) and not any(header.startswith(p) for p in prefixes):
                    why = f"{folder} may not include {header}"
                elif SERVER.match(header) and not server:
                    why = f"{folder} knows nothing of the server's headers ({header})"
                elif header == LIBPQ and not libpq:
                    why = f"{folder} does not talk libpq ({header})"
            if why:
                problems.append(f"{rel}:{n}: {why}")
    return problems


def main():
    problems = []
    for rel, path in sources(ROOT, ("options", "format", "gpu", "extension", "solver")):
        problems += check_file(rel, path)
    return report(problems, f"layering: {len(problems)} include(s) against the rules")


if __name__ == "__main__":
    sys.exit(main())
