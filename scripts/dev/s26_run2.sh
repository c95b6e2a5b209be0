#!/usr/bin/env bash
# Session 26, second call (H200): where FP64 geqrf's form at 2^22 x 1024 spends its time, at
# the clocks it runs (ncu --clock-control none, grouped by kernel and grid), against 2^20's
# (session 25 run 2) to find what grows faster than m. Its first attempt also timed the
# trailing update's DGEMMs split along their long dimension (PROBE_NO_LT=1
# .carry-bin/gemm_lt_probe 4194304, scripts/dev/gemm_lt_probe.cu) and skipped the bench
# (no --copies: it did not fit).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"

source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
$TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 | tee "$out/bench_d22.txt"
stamp
timeout 330 ncu --clock-control none --metrics gpu__time_duration.sum,launch__grid_size --csv $TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 1 --baseline none --copies 2.2 > "$w/ncu.csv" 2> "$w/ncu.err"; echo "ncu rc $?"
python3 scripts/dev/ncu_by_grid.py "$w/ncu.csv" 40 | tee "$out/ncu_by_grid_22.txt"
gzip -c "$w/ncu.csv" > "$out/ncu_d22_geqrf.csv.gz"
stamp
