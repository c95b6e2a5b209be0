#!/usr/bin/env bash
# Session 14, thirteenth call, on an H100, after the last CUDA edit (run 12's code, the L2
# hint on by default): the add and remove benches, memcheck and racecheck on the add
# kernel's twin test and the back substitution's tests, every CUDA test.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench
B=$b/bench/gpuqr_update_bench
timeout 150 $B --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
timeout 150 $B --only remove --repeat 2 > "$w/update_remove.txt" 2>&1; echo "remove bench rc $?"; cat "$w/update_remove.txt"
stamp
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*:*TrsmFewRhs*:*KernelTwins*Diagonal*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:GraphCache*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]" "$w/tests_cuda.log" | head -8; grep -B3 -A12 "Failure" "$w/tests_cuda.log" | head -40
stamp
