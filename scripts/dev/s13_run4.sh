#!/usr/bin/env bash
# Session 13, fourth call: per-lane copies of R's rows again with one chunk (run 3 lost p <= 16 time), the
# next step's rows copied ahead only when ready. Update tests, sanitizers on the twin test, the add bench.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench gpuqr_tester
timeout 120 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins*:*QrUpdateTest*cuda*' > "$w/tests_update.log" 2>&1; echo "update tests rc $?"
grep -E "^\[  FAILED|PASSED" "$w/tests_update.log" | head; grep -B3 -A12 "Failure" "$w/tests_update.log" | head -60
stamp
timeout 100 $b/bench/gpuqr_update_bench --only add --repeat 2 > "$w/update_add_chained.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add_chained.txt"
stamp
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
