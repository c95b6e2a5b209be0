#!/usr/bin/env bash
# Session 24, thirteenth call, H200: where FP64 geqrf's form at 2^20 x 1024 spends its time
# (83 ms on the H200 against 75 on the H100, run 12): per-kernel times by Nsight Compute
# grouped by kernel and grid (one warm-up and one timed call, base clocks).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
timeout 200 ncu --metrics gpu__time_duration.sum,launch__grid_size --csv $TS --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --repeat 1 --baseline none > "$w/ncu_d_geqrf.csv" 2> "$w/ncu_d_geqrf.err"; echo "ncu rc $?"
python3 scripts/dev/ncu_by_grid.py "$w/ncu_d_geqrf.csv" 25
gzip -c "$w/ncu_d_geqrf.csv" > "$out/ncu_d_geqrf.csv.gz"
stamp
