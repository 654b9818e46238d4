#!/usr/bin/env python3
"""Renders bench/results/<machine>/README.md (tables, ratios against Tuffy's
published figures) and PNG plots (gnuplot) from what bench/run.sh wrote."""
import csv
import glob
import json
import os
import subprocess
import sys

# Tuffy's figures on a 2-core machine like the development machines
# (docs/tuffy-reference.md and the issues).
TUFFY = {
    "class": {"atoms": 9650, "clauses": 73265, "ground_s": 0.78, "total_s": (12.6, 14.6), "cost": 361.56},
    "smoke": {"atoms": 6, "clauses": 6, "cost": 0.0},
}


def fnum(v, fmt="{:.3f}"):
    try:
        return fmt.format(float(v))
    except (TypeError, ValueError):
        return "-"


def span(r):
    """Range of the totals over repeated runs, e.g. '0.78-0.84 (5)'."""
    if not r.get("runs") or r["runs"] in ("", "1"):
        return "-"
    return f"{fnum(r['total_min_s'])}-{fnum(r['total_max_s'])} ({r['runs']})"


def load_runs(out):
    path = os.path.join(out, "runs.csv")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def micro_table(out, name, counters):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return []
    try:
        data = json.load(open(path))
    except json.JSONDecodeError:
        return [f"({name}.json is not valid JSON)"]
    lines = ["| benchmark | time (ms) | " + " | ".join(counters) + " |",
             "|---|---:|" + "---:|" * len(counters)]
    # Device-to-device (or memcpy) bandwidth per backend and size, for the
    # operators' "fraction of copy bandwidth".
    copy_bw = {}
    for b in data.get("benchmarks", []):
        parts = b.get("name", "").split("/")
        if parts[0] == "copy" and len(parts) >= 3 and b.get("bytes_per_second"):
            copy_bw[(parts[1], parts[2])] = b["bytes_per_second"]
    for b in data.get("benchmarks", []):
        parts = b.get("name", "").split("/")
        if "frac_of_copy_bw" in counters and len(parts) >= 3 and (parts[1], parts[2]) in copy_bw \
                and b.get("bytes_per_second") and parts[0] != "copy":
            b["frac_of_copy_bw"] = b["bytes_per_second"] / copy_bw[(parts[1], parts[2])]
        if b.get("run_type") == "aggregate":
            continue
        t = b.get("real_time", 0)
        if not t or b.get("error_occurred"):
            continue  # skipped (e.g. no GPU) or failed
        unit = b.get("time_unit", "ns")
        ms = t / {"ns": 1e6, "us": 1e3, "ms": 1.0, "s": 1e-3}[unit]
        vals = []
        for c in counters:
            v = b.get(c)
            vals.append("-" if v is None else (f"{v:.4g}"))
        lines.append(f"| {b['name']} | {ms:.3f} | " + " | ".join(vals) + " |")
    return lines


def plot(out, runs):
    """Log-log scaling plot and cost-over-time curves (gnuplot, if present)."""
    if subprocess.call(["which", "gnuplot"], stdout=subprocess.DEVNULL) != 0:
        return []
    made = []
    series = {}
    for r in runs:
        if r["workload"] in ("smokers", "rc") and r["total_s"]:
            series.setdefault((r["workload"], r["path"]), []).append((int(r["size"]), float(r["total_s"]),
                                                                      float(r["ground_s"] or 0)))
    if series:
        plots = []
        for (w, p), pts in sorted(series.items()):
            dat = os.path.join(out, f"scaling-{w}-{p}.dat")
            with open(dat, "w") as f:
                for n, t, g in sorted(pts):
                    f.write(f"{n} {t} {g}\n")
            plots.append(f"'{dat}' using 1:2 with linespoints title '{w} {p} total', "
                         f"'{dat}' using 1:3 with linespoints dashtype 2 title '{w} {p} grounding'")
        script = (f"set terminal pngcairo size 900,600 noenhanced; set output '{out}/scaling.png'; set logscale xy; "
                  "set xlabel 'people / papers'; set ylabel 'seconds'; set key left top; set grid; "
                  "set title 'pg_mln end-to-end time vs size'; plot " + ", ".join(plots))
        if subprocess.call(["gnuplot", "-e", script]) == 0:
            made.append("scaling.png")
    traces = sorted(glob.glob(os.path.join(out, "trace-*.dat")))
    traces = [t for t in traces if os.path.getsize(t) > 0]
    if traces:
        plots = [f"'{t}' using 1:2 with lines title '{os.path.basename(t)[6:-4]}'" for t in traces]
        script = (f"set terminal pngcairo size 900,600 noenhanced; set output '{out}/cost.png'; set xlabel 'seconds of search'; "
                  "set ylabel 'best cost'; set logscale y; set grid; set title 'MaxWalkSAT best cost over time'; "
                  "plot " + ", ".join(plots))
        if subprocess.call(["gnuplot", "-e", script]) == 0:
            made.append("cost.png")
    return made


def main():
    out = sys.argv[1]
    meta = {}
    if os.path.exists(os.path.join(out, "meta.txt")):
        for line in open(os.path.join(out, "meta.txt")):
            k, _, v = line.strip().partition("=")
            meta[k] = v
    runs = load_runs(out)
    md = [f"# pg_mln benchmark report: {meta.get('machine', '?')}", "",
          f"- commit: `{meta.get('commit', '?')}`, date: {meta.get('date', '?')}",
          f"- CPU: {meta.get('cpu', '?')}", f"- GPU: {meta.get('gpu', 'none')}",
          f"- command: `{meta.get('command', 'bash bench/run.sh')}`", "",
          "## End to end (pg_mln command line)", "",
          "Seconds per phase as the command line reports them (load = evidence COPY and ingest; ground = "
          "`mln.ground` inside PostgreSQL; search = worker: read network, components, MaxWalkSAT, write back). "
          "RSS: peak resident memory of the command line and of the grounding backend. Engine MB: the operator "
          "engine's working memory at its peak during grounding (device memory on the gpu path, host memory on "
          "the cpu path). Search GPU MB: device memory of the GPU MaxWalkSAT at its peak. Samples run several times: "
          "the row is the run with the median total, with the range of totals beside it.", "",
          "| workload | size | path | load s | ground s | search s | total s | total range (runs) | atoms | clauses | cost | hard viol. | CLI RSS MB | backend RSS MB | engine MB | search GPU MB |",
          "|---|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        md.append(f"| {r['workload']} | {r['size'] if r['size'] != '0' else '-'} | {r['path']} | {fnum(r['load_s'])} | "
                  f"{fnum(r['ground_s'])} | {fnum(r['search_s'])} | {fnum(r['total_s'])} | {span(r)} | {r['atoms']} | "
                  f"{r['clauses']} | {r['cost']} | {r['hard_violated']} | "
                  f"{fnum(float(r['cli_rss_kb'] or 0) / 1024, '{:.0f}')} | "
                  f"{fnum(float(r['backend_rss_kb'] or 0) / 1024, '{:.0f}')} | {fnum(r.get('ground_engine_mb'), '{:.1f}')} | "
                  f"{fnum(r.get('search_gpu_mb'), '{:.1f}')} |")
    md += ["", "## Against Tuffy", "",
           "Tuffy's figures for class on a 2-core machine like the development machines: 9,650 atoms, 73,265 clauses, "
           "0.78 s grounding, 12.6-14.6 s end to end, cost 361.56.", "",
           "End-to-end speed-up: Tuffy's 12.6-14.6 s over the median total; slowest run: Tuffy's 12.6 s over the "
           "slowest of the repeated runs.", "",
           "| workload | path | counts equal Tuffy's | ground speed-up | end-to-end speed-up | slowest run | cost (Tuffy) |",
           "|---|---|---|---:|---:|---:|---|"]
    for r in runs:
        t = TUFFY.get(r["workload"])
        if not t:
            continue
        same = (str(t["atoms"]) == r["atoms"] and str(t["clauses"]) == r["clauses"])
        g = f"{t['ground_s'] / float(r['ground_s']):.1f}x" if "ground_s" in t and r["ground_s"] else "-"
        e = (f"{t['total_s'][0] / float(r['total_s']):.1f}-{t['total_s'][1] / float(r['total_s']):.1f}x"
             if "total_s" in t and r["total_s"] else "-")
        worst = (f"{t['total_s'][0] / float(r['total_max_s']):.1f}x"
                 if "total_s" in t and r.get("total_max_s") else "-")
        md.append(f"| {r['workload']} | {r['path']} | {'yes' if same else 'NO'} | {g} | {e} | {worst} | "
                  f"{r['cost']} ({t['cost']}) |")
    # Grounding: operator engine against the plain-SQL path (Tuffy's generated SQL).
    by = {}
    for r in runs:
        if r["ground_s"]:
            by.setdefault((r["workload"], r["size"]), {})[r["path"]] = float(r["ground_s"])
    rows = [(k, v) for k, v in by.items() if "sql" in v]
    if rows:
        paths = [p for p in ("gpu", "cpu") if any(p in v for _, v in rows)]
        md += ["", "## Grounding: operator engine vs the plain-SQL path", "",
               "`mln.ground` seconds (evidence read, grounding, network stored) per path; ratio = SQL path / path.", "",
               "| workload | size | sql s | " + " | ".join(f"{p} s | {p} speed-up" for p in paths) + " |",
               "|---|---:|---:|" + "---:|---:|" * len(paths)]
        for (w, n), v in rows:
            cells = []
            for p in paths:
                cells.append(f"{v[p]:.3f} | {v['sql'] / v[p]:.1f}x" if p in v and v[p] > 0 else "- | -")
            md.append(f"| {w} | {n if n != '0' else '-'} | {v['sql']:.3f} | " + " | ".join(cells) + " |")
    md.append("")
    for name, counters, title in [
        ("bench_ops", ["bytes_per_second", "frac_of_copy_bw"], "Operators (bytes moved per second; fraction of a plain copy's bandwidth on the same backend and size)"),
        ("bench_walksat", ["flips_per_s", "seconds_to_target", "best_cost"], "MaxWalkSAT"),
        ("bench_ground", ["atoms", "clauses", "clauses_s", "consolidate_s", "engine_peak_mb"], "Grounding (library level)"),
    ]:
        t = micro_table(out, name, counters)
        if t:
            md += [f"## {title} (`{name}`)", ""] + t + [""]
    lev = os.path.join(out, "load_evidence.md")
    if os.path.exists(lev):
        lines = open(lev).read().splitlines()
        md += ["## Evidence loading (`bench/load_evidence.sh`)", ""] + lines[2:] + [""]
    hops = os.path.join(out, "heap_ops.md")
    if os.path.exists(hops):
        lines = open(hops).read().splitlines()
        md += ["## Heap-to-heap operators vs PostgreSQL (`bench/heap_ops.sh`)", ""] + lines[2:] + [""]
    for png in plot(out, runs):
        md += [f"![{png}]({png})", ""]
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
