#!/usr/bin/env bash
# Session 14, fifth call: reflectors applied two at a time (the pair's coupling v_(i+1) . v_i
# published with tau; GPUQR_ADD_PAIRS=1, default) against one at a time (0); one chunk's
# hand-off by p (fill and tau first for p <= 4, flags above: run 4). Tests under the defaults,
# pairs off, and each publish mode forced; sanitizers; add bench, default and pairs off.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench
B=$b/bench/gpuqr_update_bench
F='*QrUpdateCudaTwins*:*QrUpdateTest*cuda*:*KernelTwins*Diagonal*'
for env in "X=0" "GPUQR_ADD_PAIRS=0" "GPUQR_ADD_PUBLISH=0" "GPUQR_ADD_PUBLISH=1" "GPUQR_ADD_PUBLISH=2"; do
  env $env timeout 90 $b/tests/gpuqr_tests --gtest_filter="$F" > "$w/tests_update_$env.log" 2>&1; echo "update tests $env rc $?"
  grep -E "^\[  FAILED|PASSED" "$w/tests_update_$env.log" | head; grep -B3 -A12 "Failure" "$w/tests_update_$env.log" | head -30
done
stamp
timeout 150 $B --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
GPUQR_ADD_PAIRS=0 timeout 150 $B --only add --repeat 2 > "$w/update_add_pairs0.txt" 2>&1; echo "add bench pairs 0 rc $?"; cat "$w/update_add_pairs0.txt"
stamp
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
