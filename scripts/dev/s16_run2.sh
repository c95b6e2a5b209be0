#!/usr/bin/env bash
# Session 16, second call: the one-block Cholesky + inverse for n <= 128 (cholesky_small.cu)
# and m16n8k4 at NP = 128. Its twin tests, memcheck/racecheck on them, the CholeskyQR and
# tall-skinny CUDA tests, then the bench with GPUQR_SMALL_CHOLESKY=0 / default in one run, and
# the new kernel's time under ncu.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*Tsqr*:*Gram*:*TallTimesUpper*:-*cpu*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" "$w/tests_tsqr.log" | head -30
stamp
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*SmallCholesky*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
for v in 0 1; do
  echo "GPUQR_SMALL_CHOLESKY=$v"
  GPUQR_SMALL_CHOLESKY=$v timeout 150 $B --m 1048576 --n 32,64,128 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 7 | tee "$w/tsqr_small$v.txt" | grep -E "^[ds] "
done
stamp
timeout 100 ncu --metrics gpu__time_duration.sum,launch__grid_size --csv -k regex:"small_cholesky|potrf|trsm|cholesky_post|gram_status" $B --baseline none --m 1048576 --n 64,128 --precision d,s --methods automatic --forms rb --repeat 1 > "$w/ncu_chol.csv" 2> "$w/ncu_chol.err"; echo "ncu rc $?"
python3 scripts/dev/ncu_by_grid.py "$w/ncu_chol.csv" 12
stamp
