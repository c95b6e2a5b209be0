#!/usr/bin/env bash
# Session 16, eighth call (after the last CUDA edit: the breakdown column kept in a register of
# warp 0, racecheck's intra-warp warnings in run 7): the CholeskyQR twin and tall-skinny CUDA
# tests, memcheck/racecheck on the one-block Cholesky, its trace, the n <= 128 bench.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*Tsqr*:*Gram*:*TallTimesUpper*:*Update*cuda*:-*cpu*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure" "$w/tests_tsqr.log" | head -20
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*SmallCholesky*:*CholeskyBreakdown*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
GPUQR_SMALL_CHOLESKY_TRACE=1 timeout 60 $B --baseline none --m 1048576 --n 128 --precision d,s --methods cholesky_qr2 --forms rb --repeat 1 2>&1 | grep -E "small_cholesky" | awk 'NR % 4 == 0'
timeout 120 $B --m 1048576 --n 16,32,64,128 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 5 | tee "$w/tsqr.txt" | grep -E "^[ds] |failed"
stamp
