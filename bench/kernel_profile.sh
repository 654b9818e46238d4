#!/usr/bin/env bash
# Per-kernel DRAM bandwidth of the GPU operators, measured with Nsight Compute
# (ncu, from the CUDA toolkit): each kernel one benchmark iteration launches,
# with its duration and the bytes it read from and wrote to device memory,
# as a fraction of the bandwidth of a device-to-device copy measured in the
# same run (bench_ops' copy benchmark at the same size, read plus write).
#
#   bash bench/kernel_profile.sh BUILD_DIR OUT_DIR [BENCH_REGEX ...]
#
# Default: join, join_hash and join_sort at 10^7 rows.  Each regex is one
# ncu run over bench_ops with one iteration (--benchmark_min_time tiny), so
# the kernels listed are exactly that operator call's.  ncu runs with
# --cache-control none and --clock-control none: kernels see the caches and
# clocks they see in an ordinary run (ncu's defaults flush L2 before each
# kernel and lock the clocks to base).  Writes OUT_DIR/kernels.md.
set -uo pipefail
B=${1:?usage: kernel_profile.sh BUILD_DIR OUT_DIR [BENCH_REGEX ...]}
OUT=${2:?usage: kernel_profile.sh BUILD_DIR OUT_DIR [BENCH_REGEX ...]}
shift 2
[ $# -gt 0 ] || set -- '^join/cuda/10000000/' '^join_hash/cuda/10000000/' '^join_sort/cuda/10000000/'
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
export MLN_BENCH_MAX_ROWS=${MLN_BENCH_MAX_ROWS:-100000000}  # bench_ops registers 10^8 only when asked
mkdir -p "$OUT"
md=$OUT/kernels.md

# The copy roofline at the benchmark's own size (the number in its regex),
# outside ncu: bytes_per_second of bench_ops' copy benchmark.
copy_bw() {
  local n
  n=$(echo "$1" | grep -oE '[0-9]{4,}' | head -1)
  "$B/bench/bench_ops" --benchmark_filter="^copy/cuda/${n:-10000000}/" --benchmark_format=json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["benchmarks"][0]["bytes_per_second"])' 2>/dev/null || echo 0
}

{
  echo "# GPU kernels by DRAM bandwidth (bench/kernel_profile.sh)"
  echo
  echo "- command: \`bash bench/kernel_profile.sh ${B#"$PWD"/} OUT $*\`"
  echo "- device: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $($NCU --version 2>/dev/null | tail -1)"
  echo "- commit: ${MLN_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
  echo "- ncu --cache-control none --clock-control none; one iteration of each benchmark"
  echo "- of copy: the kernel's DRAM read + write bytes per second over a device-to-device cudaMemcpy's (read + write) of the benchmark's two-column input size"
  echo
} >"$md"

i=0
for re in "$@"; do
  i=$((i + 1))
  csv=$OUT/kp_$i.csv
  "$NCU" --csv --page raw --print-units base --cache-control none --clock-control none \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum \
    "$B/bench/bench_ops" --benchmark_filter="$re" --benchmark_min_time=0.000001 >"$csv" 2>"$OUT/kp_$i.err"
  echo "ncu $re: exit $?" >&2
  bw=$(copy_bw "$re")
  python3 - "$csv" "$re" "$bw" >>"$md" <<'EOF'
import csv, sys
path, regex, copy_bw = sys.argv[1], sys.argv[2], float(sys.argv[3] or 0)
lines = [l for l in open(path) if l.startswith('"')]
rows = list(csv.DictReader(lines))
rows = [r for r in rows if r.get("ID", "").isdigit()]  # drops the units row
print(f"## `{regex}`\n")
print(f"copy bandwidth at this size: {copy_bw / 1e9:.0f} GB/s\n")
if not rows:
    print("ncu recorded no kernels (see kp_*.err)\n")
    sys.exit(0)
print("| # | kernel | grid x block | us | DRAM read MB | DRAM write MB | L2 MB | DRAM GB/s | of copy |")
print("|---:|---|---|---:|---:|---:|---:|---:|---:|")
tot_t = tot_b = 0.0
def num(r, k):
    try: return float(r[k].replace(",", ""))
    except (KeyError, ValueError): return 0.0
for r in rows:
    t = num(r, "gpu__time_duration.sum") * 1e-9  # ns
    rd, wr, l2 = num(r, "dram__bytes_read.sum"), num(r, "dram__bytes_write.sum"), num(r, "lts__t_bytes.sum")
    name = r.get("Kernel Name", "?").replace("(anonymous namespace)::", "")
    short = name.split("(")[0].split("<")[0].replace("void ", "").strip()
    if "cub::" in name or "thrust::" in name or "CUB" in name:
        for tag in ("DeviceScan", "DeviceReduce", "DeviceSelect", "DeviceRadixSort", "DeviceFor", "transform", "fill", "ScanInit", "Scan", "Reduce", "for_each", "Transform"):
            if tag in name:
                short = short + " [" + tag + "]"
                break
    bw = (rd + wr) / t if t else 0
    tot_t += t; tot_b += rd + wr
    frac = f"{bw / copy_bw:.2f}" if copy_bw else "-"
    print(f"| {r['ID']} | `{short[:60]}` | {r.get('Grid Size','')} x {r.get('Block Size','')} | {t*1e6:.1f} | {rd/1e6:.1f} | {wr/1e6:.1f} | {l2/1e6:.1f} | {bw/1e9:.0f} | {frac} |")
bw = tot_b / tot_t if tot_t else 0
frac = f"{bw / copy_bw:.2f}" if copy_bw else "-"
print(f"| | all kernels | | {tot_t*1e6:.1f} | | | | {bw/1e9:.0f} | {frac} |\n")
EOF
done
cat "$md"
