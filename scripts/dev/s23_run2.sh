#!/usr/bin/env bash
# Session 23, second call (the code of run 1): the tall-skinny table against cuSOLVER in one
# run (2^20 x 256 / 512 / 1024 both precisions; FP32 2^18 and 2^22 x 1024), mixed precision
# on and off (GPUQR_CHOLQR_LOW_GRAM=0) at 2^20, and issue 3's geqrf 1024 / 4096.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench gpuqr_tester
TS=$b/bench/gpuqr_tsqr_bench
timeout 200 $TS --m 1048576 --n 256,512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 > "$w/tsqr20.txt" 2>&1; echo "tsqr 2^20 rc $?"
grep -E "^[ds] |copy" "$w/tsqr20.txt"
stamp
timeout 120 $TS --m 1048576 --n 256,512,1024 --precision d,s --methods automatic --forms rb,explicit --repeat 3 --baseline none --variants default,GPUQR_CHOLQR_LOW_GRAM=0 > "$w/ab.txt" 2>&1; echo "a/b rc $?"
grep -E "^[ds] " "$w/ab.txt"
stamp
timeout 170 $TS --m 262144,4194304 --n 1024 --precision s --methods automatic --forms rb,explicit,geqrf --repeat 2 > "$w/tsqr_m.txt" 2>&1; echo "tsqr m rc $?"
grep -E "^[ds] " "$w/tsqr_m.txt"
stamp
timeout 60 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,4096 --repeat 5 --warmup 2 > "$w/tester.txt" 2>&1; echo "tester rc $?"
grep -E '^geqrf ' $w/tester.txt | awk '{printf "%s %s%s %s/%s=%s\n", $1, $2, $5, $8, $11, $13}'
stamp
