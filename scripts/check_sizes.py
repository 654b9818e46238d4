#!/usr/bin/env python3
"""Files and functions short enough to hold in one's head, checked.

In solver/ and extension/ (C++ and CUDA), a file has at most 500 lines and a
function body at most 120, unless a comment says why it is longer: a
comment line containing "long file:" in the file's first 15 lines, or "long
function:" in the 5 lines above the function's signature.  The scan is
lexical (braces outside strings and comments): a brace opened after a
parenthesised signature at namespace or class level starts a function.
Usage: check_sizes.py [ROOT]; prints each offender, exits 1 on any.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_tree import report, sources  # noqa: E402

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
FOLDERS = ("solver", "extension")
MAX_FILE, MAX_FUNCTION = 500, 120
CONTAINER = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$")


def strip(text):
    """The text with comments and string/char literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            m = re.match(r'R"([^(]*)\(', text[i - 1:i + 20]) if c == '"' and i > 0 and text[i - 1] == "R" else None
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                j = n if end < 0 else end + len(m.group(1)) + 2
            else:
                j = i + 1
                while j < n and text[j] != c:
                    j += 2 if text[j] == "\\" else 1
                j = min(n, j + 1)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(code):
    """(first line, last line, signature line) of each function body."""
    stack, found, head, line = [], [], [], 1
    start_line = 1
    for c in code:
        if c == "\n":
            line += 1
        if c == "{":
            text = "".join(head).strip()
            inside_function = any(kind == "function" for kind, _ in stack)
            if not inside_function and text.endswith(("const", ")", "noexcept", "override", "final")) or (
                    not inside_function and re.search(r"\)\s*(const|noexcept|override|final|->[^{]*)?\s*$", text)):
                kind = "function"
            elif not inside_function and (CONTAINER.search(text) or text.startswith("extern")):
                kind = "container"
            else:
                kind = "block"
            stack.append((kind, start_line if kind == "function" else line))
            head = []
        elif c == "}":
            if stack:
                kind, first = stack.pop()
                if kind == "function":
                    found.append((first, line))
            head = []
        elif c == ";":
            head = []
        else:
            if not head or not "".join(head).strip():
                start_line = line
            head.append(c)
    return found


def check(rel, path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = text.split("\n")
    problems = []
    if len(lines) > MAX_FILE and not any("long file:" in l for l in lines[:15]):
        problems.append(f"{rel}: {len(lines)} lines (more than {MAX_FILE}, and no 'long file:' comment saying why)")
    for first, last in functions(strip(text)):
        size = last - first + 1
        if size <= MAX_FUNCTION:
            continue
        above = lines[max(0, first - 6):first]
        if any("long function:" in l for l in above):
            continue
        problems.append(f"{rel}:{first}: a function of {size} lines (more than {MAX_FUNCTION}, and no "
                        f"'long function:' comment saying why)")
    return problems


def main():
    problems = []
    for rel, path in sources(ROOT, FOLDERS):
        problems += check(rel, path)
    return report(problems, f"sizes: {len(problems)} file(s) or function(s) over the limits")


if __name__ == "__main__":
    sys.exit(main())
