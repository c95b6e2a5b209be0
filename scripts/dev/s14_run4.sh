#!/usr/bin/env bash
# Session 14, fourth call: one chunk's hand-off, three ways (GPUQR_ADD_PUBLISH): 0 flags (V in
# U, fence, flag), 1 fill and poll V and tau together (run 3: p = 1 and 4 faster, p = 16
# slower), 2 fill, poll tau alone then read V (default). The early-fetch knob of run 3 dropped
# (measured slower). Tests under each mode, sanitizers, add bench (mode 2), p <= 16 under 0, 1.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench
B=$b/bench/gpuqr_update_bench
F='*QrUpdateCudaTwins*:*QrUpdateTest*cuda*:*KernelTwins*Diagonal*'
for mode in 2 0 1; do
  GPUQR_ADD_PUBLISH=$mode timeout 90 $b/tests/gpuqr_tests --gtest_filter="$F" > "$w/tests_update_publish$mode.log" 2>&1; echo "update tests publish $mode rc $?"
  grep -E "^\[  FAILED|PASSED" "$w/tests_update_publish$mode.log" | head; grep -B3 -A12 "Failure" "$w/tests_update_publish$mode.log" | head -30
done
stamp
timeout 150 $B --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
for mode in 0 1 2; do
  GPUQR_ADD_PUBLISH=$mode timeout 60 $B --only add --pmax 16 --repeat 3 > "$w/update_small_publish$mode.txt" 2>&1; echo "p <= 16, publish $mode rc $?"; cat "$w/update_small_publish$mode.txt"
done
stamp
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
