#!/usr/bin/env bash
# Session 16, sixth call: the one-block Cholesky without the hoisting fences, R written out
# while the diagonal blocks are inverted: tests, trace, bench A/B.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 100 $b/tests/gpuqr_tests --gtest_filter='*TsqrCudaTwins*' > "$w/tests_twins.log" 2>&1; echo "twin tests rc $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure" "$w/tests_twins.log" | head -20
GPUQR_SMALL_CHOLESKY_TRACE=1 timeout 60 $B --baseline none --m 1048576 --n 32,64,96,128 --precision d,s --methods cholesky_qr2 --forms rb --repeat 1 2>&1 | grep -E "small_cholesky|^[ds] " | awk 'NR % 4 == 0 || /^[ds] /'
stamp
for v in 0 1; do
  echo "GPUQR_SMALL_CHOLESKY=$v"
  GPUQR_SMALL_CHOLESKY=$v timeout 150 $B --m 1048576 --n 64,128 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 7 | tee "$w/tsqr_small$v.txt" | grep -E "^[ds] "
done
stamp
