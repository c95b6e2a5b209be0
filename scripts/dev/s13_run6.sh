#!/usr/bin/env bash
# Session 13, sixth call, after the last CUDA edit: the chunked FP64 add kernel with one buffer
# of R's rows and at most 128 registers (16 warps per SM, was 10); the polls' pause knob
# removed. Every CUDA test, memcheck and racecheck on the twin tests of both chained kernels,
# the add bench.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench
timeout 100 $b/bench/gpuqr_update_bench --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*:*TrsmFewRhs*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:GraphCache*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]" "$w/tests_cuda.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_cuda.log" | head -40
stamp
