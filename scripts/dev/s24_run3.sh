#!/usr/bin/env bash
# Session 24, third call: why larfb's 3xTF32 product is slower than SGEMM in geqrf's form
# (run 2): per-kernel times by Nsight Compute (2^20 x 1024 FP32, one warm-up and one timed
# call) and the row chunk's size (GPUQR_LARFB_TF32_CHUNK_MB) in one A/B.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
timeout 150 $TS --m 1048576 --n 1024 --precision s --methods automatic --forms geqrf --repeat 3 --baseline none --variants default,GPUQR_LARFB_TF32=0,GPUQR_LARFB_TF32_CHUNK_MB=96,GPUQR_LARFB_TF32_CHUNK_MB=256,GPUQR_LARFB_TF32_CHUNK_MB=4096 > "$w/chunks.txt" 2>&1; echo "rc $?"
grep -E "^[ds] " "$w/chunks.txt"
GPUQR_LOOKAHEAD=0 timeout 100 $TS --m 1048576 --n 1024 --precision s --methods automatic --forms geqrf --repeat 3 --baseline none --variants default,GPUQR_LARFB_TF32=0 > "$w/nolookahead.txt" 2>&1; echo "no look-ahead rc $?"
grep -E "^[ds] " "$w/nolookahead.txt"
stamp
timeout 200 ncu --metrics gpu__time_duration.sum,launch__grid_size --csv $TS --m 1048576 --n 1024 --precision s --methods automatic --forms geqrf --repeat 1 --baseline none > "$w/ncu_s_geqrf.csv" 2> "$w/ncu_s_geqrf.err"; echo "ncu rc $?"
python3 scripts/dev/ncu_by_grid.py "$w/ncu_s_geqrf.csv" 30
stamp
