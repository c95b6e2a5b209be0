#!/usr/bin/env bash
# Session 13, first call: add_rows_chained (update_rows_chained.cu) takes any p without Q on
# CUDA, chunks of 16 rows as a wavefront over chunks and tiles. Twin and update tests,
# memcheck and racecheck on the twin test, the add bench with the chained path (default) and
# the blocked one (GPUQR_ADD_CHAINED=0) in the same run, gels against cuSOLVER (FP32 1024
# re-measured).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench gpuqr_tester
timeout 120 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins*:*QrUpdateTest*cuda*' > "$w/tests_update.log" 2>&1; echo "update tests rc $?"
grep -E "^\[  FAILED|PASSED" "$w/tests_update.log" | head; grep -B3 -A12 "Failure" "$w/tests_update.log" | head -60
stamp
timeout 100 $b/bench/gpuqr_update_bench --only add --repeat 2 > "$w/update_add_chained.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add_chained.txt"
stamp
GPUQR_ADD_CHAINED=0 timeout 100 $b/bench/gpuqr_update_bench --only add --repeat 2 > "$w/update_add_blocked.txt" 2>&1; echo "add bench (blocked) rc $?"; cat "$w/update_add_blocked.txt"
stamp
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
timeout 50 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op gels --precision d,s --dim 1024,4096 --repeat 3 --warmup 2 > "$w/tester_gels.txt" 2>&1; echo "tester rc $?"; cut -c1-170 "$w/tester_gels.txt" | grep -E "^gels|passed|ratio|op " | head -12
stamp
