#!/usr/bin/env bash
# Session 13, ninth call: run 7's code again (run 8's 96-register FP64 kernel measured slower), as
# the last CUDA edit. Update and twin tests, memcheck and racecheck on the twin test,
# the add bench.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench
timeout 100 $b/bench/gpuqr_update_bench --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
timeout 60 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins*:*QrUpdateTest*cuda*' > "$w/tests_update.log" 2>&1; echo "update tests rc $?"
grep -E "^\[  FAILED|PASSED" "$w/tests_update.log" | head; grep -B3 -A12 "Failure" "$w/tests_update.log" | head -40
stamp
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
