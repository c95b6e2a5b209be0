#!/usr/bin/env bash
# Session 14, tenth call: the code of run 9 (the add kernel's SASS unchanged since; comments
# only). Every CUDA test; memcheck and racecheck on the add kernel's twin test, the back
# substitution's tests and the read-back twin; the add bench and the remove bench against
# cuSOLVER; gels against cuSOLVER (the back substitution changed in run 7).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench gpuqr_tester
B=$b/bench/gpuqr_update_bench
timeout 150 $B --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
timeout 150 $B --only remove --repeat 2 > "$w/update_remove.txt" 2>&1; echo "remove bench rc $?"; cat "$w/update_remove.txt"
stamp
timeout 60 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op gels --precision s,d --dim 1024,4096 --repeat 5 --warmup 2 > "$w/tester_gels.txt" 2>&1; echo "tester rc $?"; cut -c1-170 "$w/tester_gels.txt" | grep -E "^gels|passed|op " | head -12
stamp
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*:*TrsmFewRhs*:*KernelTwins*Diagonal*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:GraphCache*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]" "$w/tests_cuda.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_cuda.log" | head -40
stamp
