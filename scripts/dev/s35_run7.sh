#!/usr/bin/env bash
# Session 35 run 7: the 2^22 x 1024 row of issue 4's grid on the final code, every form
# (R alone, explicit Q, geqrf's form) in both precisions, against cuSOLVER in the same run.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
timeout 400 $TS --m 4194304 --n 1024 --precision d,s --methods automatic --forms r,explicit,geqrf --repeat 2 --copies 2.2 > "$out/bench_22x1024.txt" 2>&1; echo "bench rc $?"
grep -E "^[ds] " "$out/bench_22x1024.txt"
stamp
