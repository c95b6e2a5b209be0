#!/usr/bin/env bash
# Session 19, run 9: the whole test binary on the device (CPU and CUDA cases), on the final
# code: what passed, failed and was skipped.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests
timeout 480 $b/tests/gpuqr_tests > "$w/all_tests.log" 2>&1; echo "all tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran" "$w/all_tests.log" | head -30; grep -B3 -A10 "Failure" "$w/all_tests.log" | head -30
