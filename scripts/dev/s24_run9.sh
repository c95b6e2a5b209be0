#!/usr/bin/env bash
# Session 24, ninth call: every CUDA test of the test binary on the final code (larfb's FP32
# products by CUTLASS's 3xTF32 GEMMs, CUTLASS headers carried in .carry-cutlass).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests
T=$b/tests/gpuqr_tests
timeout 470 $T --gtest_filter='-*cpu*' > "$w/tests_all.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|tests ran" "$w/tests_all.log" | head -30
grep -E "SGEMM .* u" "$w/tests_all.log" | head -8
cp "$w/tests_all.log" "$out/"
stamp
