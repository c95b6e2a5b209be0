#!/usr/bin/env bash
# Session 21, fourth call: where CholeskyQR2's time goes at 2^20 x 1024 (explicit Q and R
# alone, FP64 and FP32): per-kernel times by Nsight Compute (bench without the baseline,
# one warm-up and one timed call: totals are two calls), against the bench's wall time.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
for p in d s; do
  for f in explicit rb; do
    timeout 150 ncu --metrics gpu__time_duration.sum --csv $TS --m 1048576 --n 1024 --precision $p --methods automatic --forms $f --repeat 1 --baseline none > "$w/ncu_${p}_$f.csv" 2> "$w/ncu_${p}_$f.err"; echo "ncu $p $f rc $?"
    grep -E "^[ds] " "$w/ncu_${p}_$f.csv" | head -3
    python3 scripts/ncu_summary.py "$w/ncu_${p}_$f.csv" 14
  done
done
stamp
timeout 100 $TS --m 1048576 --n 1024 --precision d,s --methods automatic --forms rb,explicit --repeat 3 --baseline none > "$w/wall.txt" 2>&1; grep -E "^[ds] " "$w/wall.txt"
stamp
