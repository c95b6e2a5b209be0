#!/usr/bin/env bash
# The panel kernel's hottest SASS instructions by warp-stall samples (Nsight Compute source
# page), for one launch inside a GPU geqrf.  ncu_source.sh OUTDIR [n]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:?}"; n="${2:-1024}"
t="${GPUQR_BUILD_DIR:-build-gpu}/bench/gpuqr_tester"
timeout 200 ncu --kernel-name regex:panel_kernel --launch-skip 2 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
  "$t" --backend cuda --baseline cusolver --op geqrf --precision d --dim "$n" --repeat 1 \
  --warmup 0 --no-check > "$out/ncu_source.csv" 2> "$out/ncu_source.err"
python3 - "$out/ncu_source.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
head = None
for i, r in enumerate(rows):
    if any("Source" == c or "Address" in c for c in r):
        head = r; body = rows[i + 1:]; break
if head is None:
    print("no source table; first lines:"); [print(r[:6]) for r in rows[:5]]; sys.exit()
def col(name):
    for i, c in enumerate(head):
        if c.startswith(name): return i
    return None
si = col("Warp Stall Sampling (All Samples)") or col("Warp Stall Sampling")
src = col("Source")
print("columns:", [c for c in head][:12])
tot = sum(float(r[si] or 0) for r in body if r[si].replace('.', '').isdigit())
top = sorted(body, key=lambda r: -float(r[si] or 0) if r[si].replace('.', '').isdigit() else 0)[:40]
print("total samples", tot)
for r in top:
    print(f"{r[si]:>8s}  {r[src][:110]}")
PY
