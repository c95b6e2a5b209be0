#!/usr/bin/env bash
# Session 25, fourth call (H100): every CUDA test of the test binary on the final code
# (orhr_col's one-block top kernel is the session's only library change).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
timeout 450 $T --gtest_filter='-*cpu*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|tests ran" "$w/tests.log" | tail -20
gzip -c "$w/tests.log" > "$out/tests_cuda.log.gz"
stamp
