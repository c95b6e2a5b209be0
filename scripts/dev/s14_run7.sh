#!/usr/bin/env bash
# Session 14, seventh call: the back substitution (trsm_few_rhs) publishes x through a copy
# pre-filled with a signaling NaN and polled directly (no fence, no flag); the diagonal block
# loaded into the registers of the last off-diagonal one (no spills at four right-hand sides).
# Tests (trsm, update, twins), sanitizers, add bench, gels against cuSOLVER.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench gpuqr_tester
B=$b/bench/gpuqr_update_bench
F='*TrsmFewRhs*:*QrUpdateCudaTwins*:*QrUpdateTest*cuda*:*KernelTwins*Diagonal*:*Lstsq*cuda*:*Gels*cuda*'
timeout 120 $b/tests/gpuqr_tests --gtest_filter="$F" > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED" "$w/tests.log" | head; grep -B3 -A12 "Failure" "$w/tests.log" | head -30
stamp
timeout 150 $B --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
timeout 60 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op gels --precision d,s --dim 1024,4096 --repeat 3 --warmup 2 > "$w/tester_gels.txt" 2>&1; echo "tester rc $?"; cut -c1-170 "$w/tester_gels.txt" | grep -E "^gels|passed|ratio|op " | head -12
stamp
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*:*TrsmFewRhs*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
