#!/usr/bin/env python3
"""Scaling plot for bench/datalog.sh (issue #41): seconds against edges, log-log, one line per
engine, for each program and graph of a results table that bench/datalog.sh wrote.

  datalog_plot.py RESULTS.md OUT_PREFIX

Writes OUT_PREFIX-<program>-<graph>.dat (<graph> "-" for PTA) (edges, then each engine's seconds, "-" where it did not
finish) and, with gnuplot, OUT_PREFIX.png (one panel per program and graph).  Cells like ">60" (cut
at the statement timeout) are left out of the lines.
"""
import os
import subprocess
import sys

ENGINES = [("mln.datalog", "mln.datalog (new backend)"), ("warm backend", "mln.datalog (warm backend)"),
           ("WITH RECURSIVE", "WITH RECURSIVE"), ("Soufflé", "Soufflé")]


def number(cell):
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return None


def read_table(path):
    """{(program, graph): [(edges, {engine: seconds})]} from the table's rows."""
    header, series = None, {}
    for line in open(path, encoding="utf-8"):
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "workload":
            header = cells
            continue
        if header is None or set(cells[0]) <= set("-:"):
            continue
        row = dict(zip(header, cells))
        edges = number(row.get("edges (facts)", ""))
        if edges is None:
            continue
        times = {}
        for key, name in ENGINES:
            col = next((h for h in header if h.startswith(key)), None)
            t = number(row.get(col, "")) if col else None
            if t is not None:
                times[name] = t
        prog, _, graph = row["workload"].partition(" ")
        series.setdefault((prog, graph or "-"), []).append((edges, times))
    return series


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    series = read_table(sys.argv[1])
    prefix = sys.argv[2]
    if not series:
        sys.exit(f"datalog_plot.py: no rows in {sys.argv[1]}")
    panels = []
    for (prog, graph), rows in sorted(series.items()):
        dat = f"{prefix}-{prog}-{graph}.dat"
        with open(dat, "w", encoding="utf-8") as f:
            f.write("# edges " + " | ".join(name for _, name in ENGINES) + "\n")
            for edges, times in sorted(rows):
                f.write(f"{int(edges)} " + " ".join(str(times.get(name, "-")) for _, name in ENGINES) + "\n")
        lines = [f"'{dat}' using 1:{i + 2} with linespoints title '{name}'" for i, (_, name) in enumerate(ENGINES)
                 if any(name in t for _, t in rows)]
        title = prog if graph == "-" else f"{prog} on {graph} graphs"
        panels.append(f"set title '{title}'; plot " + ", ".join(lines))
    if subprocess.call(["which", "gnuplot"], stdout=subprocess.DEVNULL) != 0:
        print("datalog_plot.py: gnuplot not found: wrote the .dat files only")
        return
    cols = min(2, len(panels))
    rows = (len(panels) + cols - 1) // cols
    script = (f"set terminal pngcairo size {600 * cols},{450 * rows} noenhanced; set output '{prefix}.png'; "
              "set datafile missing '-'; set logscale xy; set xlabel 'edges'; set ylabel 'seconds'; "
              f"set key left top; set grid; set multiplot layout {rows},{cols}; " + "; ".join(panels) +
              "; unset multiplot")
    if subprocess.call(["gnuplot", "-e", script]) != 0:
        sys.exit("datalog_plot.py: gnuplot failed")
    print(f"wrote {prefix}.png")


if __name__ == "__main__":
    main()
