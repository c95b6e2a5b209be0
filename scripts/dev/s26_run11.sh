#!/usr/bin/env bash
# Session 26, eleventh call: the final code's panel-route tests on the GPU (the test's modes
# folded into one loop and clang-format's line breaks in tsqr.cpp since run 8), and FP64
# geqrf's form at 2^22 x 1024 against cuSOLVER once more on whatever card comes.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*TsqrMethods*cuda*' > "$w/tests.txt" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|identity merge|panels|cholesky panels" "$w/tests.txt" | head -40 | tee "$out/tests_summary.txt"
stamp
$TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --variants default,GPUQR_CHOLQR_PANEL_LEAN=0,default | tee "$out/bench_d22.txt"
stamp
