#!/usr/bin/env bash
# Session 20, second call: CholeskyQR panels grouped two to a block reflector (outer 256,
# the panels' T merged), the explicit route's tau fix, FP32 R alone by Householder from
# 2^28 elements. Tall-skinny CUDA tests (memcheck on the new driver's tests), then n = 512 /
# 1024 against cuSOLVER: geqrf's form with outer 256 (default) / 128 / 384 / the route off;
# R alone and the explicit Q; 2^18 and 2^22 rows.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*TsqrMethods*:*TsqrBadInput*:*TsqrCuda*:-*cpu*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure" "$w/tests_tsqr.log" | head -20
grep -E "cholesky panels|CholeskyPanels.*OK" "$w/tests_tsqr.log" | head -20
timeout 120 compute-sanitizer --tool memcheck --leak-check no $b/tests/gpuqr_tests --gtest_filter='*CholeskyPanels*:-*cpu*' > "$w/memcheck.log" 2>&1; echo "memcheck rc $?"
grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/memcheck.log" | head -5
stamp
timeout 200 $B --m 1048576 --n 512,1024 --precision d,s --methods automatic --forms geqrf --variants default,GPUQR_CHOLQR_OUTER=128,GPUQR_CHOLQR_OUTER=384,GPUQR_CHOLQR_PANELS=0 --repeat 3 --json "$w/m20_geqrf.json" | tee "$w/m20_geqrf.txt" | grep -E "^[ds] |failed"
stamp
timeout 200 $B --m 1048576 --n 512,1024 --precision d,s --methods automatic --forms rb,explicit --variants default,GPUQR_R_HOUSEHOLDER=1 --repeat 3 --json "$w/m20_rb.json" | tee "$w/m20_rb.txt" | grep -E "^[ds] |failed"
stamp
timeout 220 $B --m 262144,4194304 --n 512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --variants default,GPUQR_CHOLQR_PANELS=0 --repeat 3 --json "$w/m18_22.json" | tee "$w/m18_22.txt" | grep -E "^[ds] |failed"
stamp
