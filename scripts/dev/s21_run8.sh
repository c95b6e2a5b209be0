#!/usr/bin/env bash
# Session 21, eighth call: after the test-only refactor of test_gram_tf32.cpp (one helper for
# the bound tests' inputs): the Gram, CholeskyQR and tall-skinny CUDA tests on the final code.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*Tsqr*cuda*:*Cholesky*cuda*:*Gram*cuda*:*TallTimes*cuda*:*Tf32*cuda*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure" "$w/tests_tsqr.log" | head -12
grep -E "WideGram|CholeskyQr2OnWide" "$w/tests_tsqr.log" | grep -E "OK|FAILED"
stamp
