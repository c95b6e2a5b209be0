#!/usr/bin/env bash
# Session 22, third call (the final CUDA code: 3xTF32 wide Gram with chains of 512 rows and
# the exact diagonal; FP32 R alone by CholeskyQR2): every CUDA test of the test binary, the
# bias detector's numbers.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
timeout 480 $b/tests/gpuqr_tests --gtest_filter='-*cpu*' > "$w/tests_all.log" 2>&1; echo "all CUDA tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|bias  " "$w/tests_all.log" | head -20
grep -E "WideGram|CholeskyQr2OnWide|WideTallSkinnyQRByMeasuredSpeed" "$w/tests_all.log" | grep -E "OK|FAILED"
stamp
