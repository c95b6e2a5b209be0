#!/usr/bin/env bash
# Session 23, first call: the NaN/Inf check from CholeskyQR's first Gram trace and
# mixed-precision CholeskyQR2 (gram_low: TF32 first Gram matrix) built; the new and touched
# CUDA tests first, then every CUDA test of the test binary.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench gpuqr_tester
T=$b/tests/gpuqr_tests
timeout 120 $T --gtest_filter='*GramLow*cuda*:*TsqrBadInput*cuda*:*MixedPrecision*cuda*:*CholeskyQr2OnWide*cuda*' > "$w/tests_new.log" 2>&1; echo "new tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure|Expected|actual" "$w/tests_new.log" | head -30
stamp
timeout 420 $T --gtest_filter='-*cpu*' > "$w/tests_all.log" 2>&1; echo "all CUDA tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests_all.log" | head -20
stamp
