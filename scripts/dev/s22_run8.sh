#!/usr/bin/env bash
# Session 22, eighth call (the final CUDA code: the 3xTF32 Gram matrix's partials within the
# chunk's bytes, and SGEMM where its workspace cannot be allocated): the Gram and wide
# CholeskyQR2 CUDA tests, FP32 2^20 x 1024 against cuSOLVER.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*GramTf32*:*CholeskyQr2OnWide*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure|^\[       OK \]" "$w/tests.log" | head -30
stamp
timeout 60 $b/bench/gpuqr_tsqr_bench --m 1048576 --n 1024 --precision s --methods automatic --forms rb,explicit --repeat 2 > "$w/tsqr20.txt" 2>&1; echo "tsqr rc $?"
grep -E "^[ds] |copy" "$w/tsqr20.txt"
stamp
