#!/usr/bin/env bash
# Branch product-gram-skew (prepared in session 35, not yet run): the FP64 product-Gram pass
# for an upper triangular X at n > 64 skewed (dmma_gram_skew_kernel: W of chunk i and the Gram
# matrix of chunk i - 1 in one iteration, one barrier; X by bands, W double-buffered). Its
# tests (bitwise equal to the two-phase pass, exact integers), then R alone by CholeskyQR2 at
# n = 128 and geqrf's form FP64 at 2^20 and 2^22 x 1024, GPUQR_GRAM_SKEW=0 alternated.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
timeout 200 $T --gtest_filter='*GramKernels*cuda_double*:*TsqrCudaTwins*:*TsqrMethods.CholeskyQr*cuda*:*TsqrMethods.GeqrfByCholeskyPanels*cuda*' > "$w/tests1.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|^\[  PASSED" "$w/tests1.log" | head; cp "$w/tests1.log" "$out/"
stamp
TS=$b/bench/gpuqr_tsqr_bench
V=default,GPUQR_GRAM_SKEW=0
timeout 100 $TS --m 1048576,4194304 --n 128 --precision d --methods cholesky_qr2 --forms rb --repeat 5 --variants $V,$V > "$out/bench_r128.txt" 2>&1; echo "bench r rc $?"
grep -E "^d " "$out/bench_r128.txt"
timeout 200 $TS --m 1048576,4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --variants $V,$V > "$out/bench_geqrf.txt" 2>&1; echo "bench geqrf rc $?"
grep -E "^d " "$out/bench_geqrf.txt"
stamp
