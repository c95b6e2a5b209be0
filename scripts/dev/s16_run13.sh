#!/usr/bin/env bash
# Session 16, thirteenth call (the final code): every CUDA test.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests
timeout 330 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:GraphCache*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests_cuda.log" | head -20
stamp
