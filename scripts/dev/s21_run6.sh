#!/usr/bin/env bash
# Session 21, sixth call (the final code of this session's CUDA changes: the Gram matrix by
# recursive halves, the wide explicit Q in two steps, the status kernels over many blocks,
# FP32 back on SGEMM): every CUDA test of the test binary, then the tall-skinny table at
# 2^20 and geqrf 1024 / 4096 against cuSOLVER.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_tsqr_bench
timeout 330 $b/tests/gpuqr_tests --gtest_filter='-*cpu*' > "$w/tests_all.log" 2>&1; echo "all CUDA tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests_all.log" | head -8
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 200 $TS --m 1048576 --n 256,512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 > "$w/tsqr20.txt" 2>&1; echo "tsqr 2^20 rc $?"
grep -E "^[ds] |copy" "$w/tsqr20.txt"
stamp
timeout 60 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,4096 --repeat 5 --warmup 2 > "$w/tester.txt" 2>&1; echo "tester rc $?"
grep -E '^geqrf ' $w/tester.txt | awk '{printf "%s %s%s %s/%s=%s\n", $1, $2, $5, $8, $11, $13}'
stamp
