#!/usr/bin/env bash
# Session 20, third call: the CholeskyQR-panel route with look-ahead (trailing updates on the
# second lane). Tall-skinny CUDA tests and memcheck of the route's tests, then n = 512 / 1024
# at 2^20 rows against cuSOLVER: geqrf's form with look-ahead (default) and without
# (GPUQR_LOOKAHEAD=0), FP32 with blocks of 128 (GPUQR_CHOLQR_OUTER=128); R alone by the route
# (GPUQR_R_HOUSEHOLDER=1) against CholeskyQR2 (=0).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*TsqrMethods*:*TsqrBadInput*:*TsqrCuda*:-*cpu*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure" "$w/tests_tsqr.log" | head -20
timeout 120 compute-sanitizer --tool memcheck --leak-check no $b/tests/gpuqr_tests --gtest_filter='*CholeskyPanels*:-*cpu*' > "$w/memcheck.log" 2>&1; echo "memcheck rc $?"
grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/memcheck.log" | head -5
stamp
timeout 200 $B --m 1048576 --n 512,1024 --precision d,s --methods automatic --forms geqrf --variants default,GPUQR_LOOKAHEAD=0,GPUQR_CHOLQR_OUTER=128,GPUQR_CHOLQR_OUTER=384 --repeat 3 --json "$w/m20_geqrf.json" | tee "$w/m20_geqrf.txt" | grep -E "^[ds] |failed"
stamp
timeout 200 $B --m 1048576 --n 512,1024 --precision d,s --methods automatic --forms rb --variants GPUQR_R_HOUSEHOLDER=0,GPUQR_R_HOUSEHOLDER=1 --repeat 3 --json "$w/m20_rb.json" | tee "$w/m20_rb.txt" | grep -E "^[ds] |failed"
stamp
