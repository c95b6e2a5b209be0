#!/usr/bin/env bash
# Session 16, tenth call: CholeskyQR2's speculated second step (host code: one status read for
# both steps). The tall-skinny and CholeskyQR CUDA tests, then the bench with
# GPUQR_CHOLQR_SPECULATE=0 / default in one run.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*Tsqr*:*Gram*:*TallTimesUpper*:*Update*cuda*:*Lstsq*cuda*:-*cpu*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure" "$w/tests_tsqr.log" | head -20
stamp
for v in 0 1; do
  echo "GPUQR_CHOLQR_SPECULATE=$v"
  GPUQR_CHOLQR_SPECULATE=$v timeout 200 $B --m 1048576 --n 16,32,64,128,256,512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 5 | tee "$w/tsqr_spec$v.txt" | grep -E "^[ds] |failed"
done
stamp
