#!/usr/bin/env bash
# Session 22, first call: the FP32 Gram matrix past 128 columns by 3xTF32 on cuBLAS's TF32
# GEMMs with mma chains of at most GPUQR_TF32_KC rows (strided batches into partials, the
# diagonal from the split pass in FP64). The Gram, CholeskyQR and tall-skinny CUDA tests
# (with the bias detector's numbers), then FP32 at 2^20 x 512 / 1024 against cuSOLVER with
# the chain length and SGEMM (GPUQR_GRAM_TF32=0) as variants, CholeskyQR2 for R alone too.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*Tsqr*cuda*:*Cholesky*cuda*:*Gram*cuda*:*TallTimes*cuda*:*Tf32*cuda*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure|bias  " "$w/tests_tsqr.log" | head -30
grep -E "WideGram|CholeskyQr2OnWide" "$w/tests_tsqr.log" | grep -E "OK|FAILED"
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 200 $TS --m 1048576 --n 512,1024 --precision s --methods automatic --forms rb,explicit,geqrf --repeat 3 --variants default,GPUQR_R_HOUSEHOLDER=0,GPUQR_TF32_KC=1024,GPUQR_TF32_KC=4096,GPUQR_GRAM_TF32=0 > "$w/tsqr20.txt" 2>&1; echo "tsqr 2^20 rc $?"
grep -E "^[ds] |copy" "$w/tsqr20.txt"
stamp
timeout 200 $TS --m 4194304 --n 1024 --precision s --methods automatic --forms rb,explicit,geqrf --repeat 2 --variants default,GPUQR_R_HOUSEHOLDER=0 > "$w/tsqr22.txt" 2>&1; echo "tsqr 2^22 rc $?"
grep -E "^[ds] " "$w/tsqr22.txt"
stamp
