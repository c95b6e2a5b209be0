#!/usr/bin/env bash
# Session 35 run 1: FP64 gram_low (the panels' TF32 first Gram matrix in geqrf's form by
# CholeskyQR panels) by the streamed kernel (src/cuda/gram_low_streamed.cu): one read of A
# instead of the conversion to FP32 and cuBLAS's TF32 GEMMs. Its tests and the drivers' that
# use it, then geqrf's form FP64 x 1024 at 2^20 and 2^22 (and x 128 at 2^20) against cuSOLVER,
# the kernel on and off (GPUQR_GRAM_LOW_STREAMED=0) alternated in one process.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
F='*GramLow*:*TsqrMethods*cuda*:*TsqrCudaTwins*:*MixedPrecision*cuda*'
timeout 240 $T --gtest_filter="$F" > "$w/tests1.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|^\[  PASSED|tests ran" "$w/tests1.log" | head -20; grep -c "^\[       OK" "$w/tests1.log"; cp "$w/tests1.log" "$out/"
stamp
TS=$b/bench/gpuqr_tsqr_bench
V=default,GPUQR_GRAM_LOW_STREAMED=0,default,GPUQR_GRAM_LOW_STREAMED=0
timeout 120 $TS --m 1048576 --n 128,1024 --precision d --methods automatic --forms geqrf --repeat 5 --variants $V > "$out/bench_d20.txt" 2>&1; echo "bench 2^20 rc $?"
stamp
timeout 200 $TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --variants $V > "$out/bench_d22.txt" 2>&1; echo "bench 2^22 rc $?"
stamp
grep -vE "^#" "$out/bench_d20.txt" "$out/bench_d22.txt" | head -40
