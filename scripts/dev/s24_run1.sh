#!/usr/bin/env bash
# Session 24, first call: where FP32 geqrf's form at 2^20 x 1024 spends its time (the last
# issue-4 gap is the same route at 2^22): per-kernel times by Nsight Compute grouped by
# kernel and grid (one warm-up and one timed call), and the wall time with look-ahead on/off.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
timeout 100 $TS --m 1048576 --n 1024 --precision s --methods automatic --forms geqrf --repeat 3 --baseline none --variants default,GPUQR_LOOKAHEAD=0 > "$w/wall.txt" 2>&1; grep -E "^[ds] " "$w/wall.txt"
stamp
timeout 200 ncu --metrics gpu__time_duration.sum,launch__grid_size --csv $TS --m 1048576 --n 1024 --precision s --methods automatic --forms geqrf --repeat 1 --baseline none > "$w/ncu_s_geqrf.csv" 2> "$w/ncu_s_geqrf.err"; echo "ncu rc $?"
python3 scripts/ncu_summary.py "$w/ncu_s_geqrf.csv" 20
python3 scripts/dev/ncu_by_grid.py "$w/ncu_s_geqrf.csv" 40
stamp
