#!/usr/bin/env bash
# Session 14, twelfth call, on an H100: the chunked add kernel stores R's rows with an L2
# evict-last policy (GPUQR_ADD_L2HINT=1, default) against plain stores (0), side by side:
# FP64 8000 x 7000 + 1500 rows was 4.79x on the H100 (run 11), its R traffic through L2 the
# suspect. Update tests under both.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench
B=$b/bench/gpuqr_update_bench
F='*QrUpdateCudaTwins*:*QrUpdateTest*cuda*'
for h in 1 0; do
  GPUQR_ADD_L2HINT=$h timeout 90 $b/tests/gpuqr_tests --gtest_filter="$F" > "$w/tests_update_hint$h.log" 2>&1; echo "update tests hint $h rc $?"
  grep -E "^\[  FAILED|PASSED" "$w/tests_update_hint$h.log" | head -3
done
stamp
for h in 1 0 1; do
  GPUQR_ADD_L2HINT=$h timeout 90 $B --only add --precision 64 --repeat 2 > "$w/update_add_hint$h.txt" 2>&1; echo "add bench FP64 hint $h rc $?"; grep -E " 1500 | 500 " "$w/update_add_hint$h.txt"
done
stamp
