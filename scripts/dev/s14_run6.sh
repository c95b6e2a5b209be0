#!/usr/bin/env bash
# Session 14, sixth call: the column step's chain two operations shorter (u -= u_j (st t1),
# st = scale tau = -1 / beta); pairs fixed at compile time (all but the chunked FP32 kernel,
# run 5). Every CUDA test; the update tests under each forced publish mode; sanitizers on the
# add kernel's twin test and the new read-back twin; the add bench.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench
B=$b/bench/gpuqr_update_bench
timeout 150 $B --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
F='*QrUpdateCudaTwins*:*QrUpdateTest*cuda*'
for mode in 0 1 2; do
  GPUQR_ADD_PUBLISH=$mode timeout 90 $b/tests/gpuqr_tests --gtest_filter="$F" > "$w/tests_update_publish$mode.log" 2>&1; echo "update tests publish $mode rc $?"
  grep -E "^\[  FAILED|PASSED" "$w/tests_update_publish$mode.log" | head; grep -B3 -A12 "Failure" "$w/tests_update_publish$mode.log" | head -30
done
stamp
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*:*KernelTwins*Diagonal*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:GraphCache*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]" "$w/tests_cuda.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_cuda.log" | head -40
stamp
