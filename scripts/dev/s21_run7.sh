#!/usr/bin/env bash
# Session 21, seventh call (same code as run 6): the 2^18 and 2^22 rows of the tall-skinny
# table, and the spread of the FP64 explicit Q at 2^20 x 1024 (five timings of the same code:
# no-op variants) after the same baseline.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
timeout 150 $TS --m 1048576 --n 1024 --precision d --methods automatic --forms explicit,rb --repeat 3 --variants default,GPUQR_CHOLQR_SPECULATE=1,GPUQR_QPROD=1,GPUQR_CHOLQR_SINGLE_PASS=1,default > "$w/spread.txt" 2>&1; echo "spread rc $?"
grep -E "^[ds] " "$w/spread.txt"
stamp
timeout 330 $TS --m 262144,4194304 --n 512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 > "$w/tsqr_m.txt" 2>&1; echo "tsqr m rc $?"
grep -E "^[ds] " "$w/tsqr_m.txt"
stamp
