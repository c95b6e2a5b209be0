#!/usr/bin/env bash
# Session 22, sixth call (the final CUDA code: the product's halves knob removed, measured
# slower in run 5): every CUDA test of the test binary.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench gpuqr_tester
timeout 480 $b/tests/gpuqr_tests --gtest_filter='-*cpu*' > "$w/tests_all.log" 2>&1; echo "all CUDA tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|bias  " "$w/tests_all.log" | head -20
grep -E "WideGram|CholeskyQr2OnWide|WideTallSkinnyQRByMeasuredSpeed" "$w/tests_all.log" | grep -E "OK|FAILED"
stamp
