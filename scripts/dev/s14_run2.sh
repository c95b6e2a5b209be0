#!/usr/bin/env bash
# Session 14, second call: the chunked add kernel's copies from a shared table of column
# pointers; flags polled with acquire loads (GPUQR_ADD_POLL, default 1) against relaxed
# polls then one acquire (0); U and e checked in one pass; the solve's diagonal and residual
# norms read back together; the bench times update + solve without a wait between them.
# Tests (update, twins, the new read-back twin), both poll settings; memcheck and racecheck
# on the add kernel's twin test; the add bench with either poll setting.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench
B=$b/bench/gpuqr_update_bench
F='*QrUpdateCudaTwins*:*QrUpdateTest*cuda*:*KernelTwins*Diagonal*'
for poll in 1 0; do
  GPUQR_ADD_POLL=$poll timeout 90 $b/tests/gpuqr_tests --gtest_filter="$F" > "$w/tests_update_poll$poll.log" 2>&1; echo "update tests poll $poll rc $?"
  grep -E "^\[  FAILED|PASSED" "$w/tests_update_poll$poll.log" | head; grep -B3 -A12 "Failure" "$w/tests_update_poll$poll.log" | head -30
done
stamp
timeout 150 $B --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
GPUQR_ADD_POLL=0 timeout 90 $B --only add --precision 64 --repeat 2 > "$w/update_add_poll0.txt" 2>&1; echo "add bench poll 0 rc $?"; cat "$w/update_add_poll0.txt"
stamp
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
