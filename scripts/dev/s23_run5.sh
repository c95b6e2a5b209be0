#!/usr/bin/env bash
# Session 23, fifth call (the final CUDA code, that of run 4): every CUDA test of the test
# binary, then the tall-skinny table against cuSOLVER in one run (2^20 x 256 / 512 / 1024
# both precisions; FP32 2^18 and 2^22 x 1024).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
timeout 400 $b/tests/gpuqr_tests --gtest_filter='-*cpu*' > "$w/tests_all.log" 2>&1; echo "all CUDA tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests_all.log" | head -20
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 100 $TS --m 1048576 --n 256,512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 > "$w/tsqr20.txt" 2>&1; echo "tsqr 2^20 rc $?"
grep -E "^[ds] |copy" "$w/tsqr20.txt"
stamp
timeout 80 $TS --m 262144,4194304 --n 1024 --precision s --methods automatic --forms rb,explicit,geqrf --repeat 2 > "$w/tsqr_m.txt" 2>&1; echo "tsqr m rc $?"
grep -E "^[ds] " "$w/tsqr_m.txt"
stamp
