#!/usr/bin/env bash
# Session 21, fifth call: the FP32 Gram matrix past 128 columns on the TF32 tensor cores
# (3xTF32 split, triangle_gemm.cu) and the status kernels over many blocks: the tall-skinny,
# CholeskyQR and Gram tests on CUDA; the bench at 2^20 x 512 / 1024 (A/B: GPUQR_GRAM_TF32=0,
# FP32 R alone by CholeskyQR2 with GPUQR_R_HOUSEHOLDER=0), 2^18 and 2^22 x 1024.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*Tsqr*cuda*:*Cholesky*cuda*:*Gram*cuda*:*TallTimes*cuda*:*Tf32*cuda*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure" "$w/tests_tsqr.log" | head -12
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 300 $TS --m 1048576 --n 512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 --variants default,GPUQR_GRAM_TF32=0,GPUQR_R_HOUSEHOLDER=0,GPUQR_CHOLQR_SPECULATE=1 > "$w/tsqr20.txt" 2>&1; echo "tsqr 2^20 rc $?"
grep -E "^[ds] " "$w/tsqr20.txt"
stamp
timeout 200 $TS --m 262144,4194304 --n 1024 --precision s --methods automatic --forms rb,explicit,geqrf --repeat 3 --variants default,GPUQR_R_HOUSEHOLDER=0 > "$w/tsqr_s.txt" 2>&1; echo "tsqr s rc $?"
grep -E "^[ds] " "$w/tsqr_s.txt"
stamp
