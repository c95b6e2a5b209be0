#!/usr/bin/env bash
# Session 14, ninth call: 9 to 16 rows as two chunks of 8 (the chunked kernel with P = 8 and
# two buffers of R's rows, the next copied ahead when the chunk before has stored it) instead
# of one chunk of 16. Update tests (and each forced publish mode), sanitizers, add bench,
# p <= 16 again.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench
B=$b/bench/gpuqr_update_bench
F='*QrUpdateCudaTwins*:*QrUpdateTest*cuda*'
for mode in X 0 1 2; do
  GPUQR_ADD_PUBLISH=$mode timeout 90 $b/tests/gpuqr_tests --gtest_filter="$F" > "$w/tests_update_publish$mode.log" 2>&1; echo "update tests publish $mode rc $?"
  grep -E "^\[  FAILED|PASSED" "$w/tests_update_publish$mode.log" | head; grep -B3 -A12 "Failure" "$w/tests_update_publish$mode.log" | head -30
done
stamp
timeout 150 $B --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
timeout 60 $B --only add --pmax 16 --repeat 3 > "$w/update_small.txt" 2>&1; echo "p <= 16 rc $?"; cat "$w/update_small.txt"
stamp
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
