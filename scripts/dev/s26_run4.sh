#!/usr/bin/env bash
# Session 26, fourth call: the identity T merge (src/core/tsqr.cpp, GPUQR_MERGE_IDENTITY): its
# tests and the other panel-route tests on the GPU, then FP64 geqrf's form with it (default)
# and without it (GPUQR_MERGE_IDENTITY=0) against cuSOLVER in the same run.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*TsqrMethods*cuda*' > "$w/tests.txt" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|identity merge|panels, " "$w/tests.txt" | head -40 | tee "$out/tests_summary.txt"
stamp
$TS --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --repeat 5 --variants default,GPUQR_MERGE_IDENTITY=0,default | tee "$out/bench_d20.txt"
stamp
$TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --variants default,GPUQR_MERGE_IDENTITY=0,default | tee "$out/bench_d22.txt"
stamp
$TS --m 262144,1048576 --n 512,1024 --precision d --methods automatic --forms geqrf,explicit,r --repeat 3 --variants default,GPUQR_MERGE_IDENTITY=0 | tee "$out/bench_d_more.txt"
stamp
