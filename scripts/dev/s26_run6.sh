#!/usr/bin/env bash
# Session 26, sixth call: the panels' lean CholeskyQR2 (single-pass form and TF32 first Gram
# matrix, default for FP64 now; GPUQR_CHOLQR_PANEL_LEAN=0 turns both off) with the identity T
# merge: the panel-route tests on the GPU, then FP64 geqrf's form lean / not lean, alternated,
# against cuSOLVER in the same run, at 2^20 and 2^22 rows.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*TsqrMethods*cuda*' > "$w/tests.txt" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|identity merge|panels|cholesky panels" "$w/tests.txt" | head -40 | tee "$out/tests_summary.txt"
stamp
V=default,GPUQR_CHOLQR_PANEL_LEAN=0,default,GPUQR_CHOLQR_PANEL_LEAN=0
$TS --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --repeat 5 --variants $V | tee "$out/bench_d20.txt"
stamp
$TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --variants $V | tee "$out/bench_d22.txt"
stamp
$TS --m 262144,1048576 --n 512 --precision d --methods automatic --forms geqrf --repeat 3 --variants default,GPUQR_CHOLQR_PANEL_LEAN=0 | tee "$out/bench_d_512.txt"
stamp
