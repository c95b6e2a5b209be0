#!/usr/bin/env bash
# Session 26, eighth call: every CUDA test of the test binary on the final code (the identity
# T merge and the panels' lean CholeskyQR2 are the session's library changes).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests
T=$b/tests/gpuqr_tests
timeout 455 $T --gtest_filter='-*cpu*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|tests ran" "$w/tests.log" | tail -20
gzip -c "$w/tests.log" > "$out/tests_cuda.log.gz"
stamp
