#!/usr/bin/env bash
# Session 22, fifth call: the 3xTF32 wide Gram matrix from 512 columns only (run 4: n = 256
# slower than SGEMM), the CholeskyQR2 test also through the TF32 Gram at 161 columns; the
# product Q = A X by recursive halves as a knob (GPUQR_PRODUCT_HALVES=1). The Gram,
# CholeskyQR and tall-skinny CUDA tests (and the product tests with the knob), then 2^20 x
# 256 / 512 / 1024 R alone and explicit Q with the knob and block columns of 256 as variants.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
timeout 330 $T --gtest_filter='*Tsqr*cuda*:*Cholesky*cuda*:*Gram*cuda*:*TallTimes*cuda*:*Tf32*cuda*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure" "$w/tests_tsqr.log" | head -12
grep -E "WideGram|CholeskyQr2OnWide|WideTallSkinnyQRByMeasuredSpeed" "$w/tests_tsqr.log" | grep -E "OK|FAILED"
stamp
GPUQR_PRODUCT_HALVES=1 timeout 120 $T --gtest_filter='*CholeskyQr2OnWide*:*TallTimes*cuda*:*TsqrMethods*Explicit*cuda*' > "$w/tests_halves.log" 2>&1; echo "halves tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure" "$w/tests_halves.log" | head -8
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 200 $TS --m 1048576 --n 256,512,1024 --precision d,s --methods automatic --forms rb,explicit --repeat 3 --variants default,GPUQR_PRODUCT_HALVES=1,GPUQR_TRI_BLOCK=256 > "$w/tsqr20.txt" 2>&1; echo "tsqr 2^20 rc $?"
grep -E "^[ds] |copy" "$w/tsqr20.txt"
stamp
