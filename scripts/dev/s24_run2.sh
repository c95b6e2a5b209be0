#!/usr/bin/env bash
# Session 24, second call: larfb's FP32 C -= V W by 3xTF32 (src/cuda/larfb_tf32.cu). Its
# tests and the tall-skinny / larfb twins, then geqrf's form with it on, off
# (GPUQR_LARFB_TF32=0) and on the trailing updates only (MIN_N=256), 2^20 and 2^22 rows.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
timeout 240 $T --gtest_filter='*LarfbTf32*:*TsqrMethods*GeqrfByCholeskyPanels*cuda*:*KernelTwins*Larfb*cuda*:*TsqrCudaTwins*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure|Expected|actual|SGEMM .* u" "$w/tests.log" | head -40
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 150 $TS --m 1048576 --n 512,1024 --precision s --methods automatic --forms geqrf --repeat 3 --variants default,GPUQR_LARFB_TF32=0,GPUQR_LARFB_TF32_MIN_N=256 > "$w/geqrf20.txt" 2>&1; echo "2^20 rc $?"
grep -E "^[ds] " "$w/geqrf20.txt"
stamp
timeout 200 $TS --m 4194304 --n 1024 --precision s --methods automatic --forms geqrf --repeat 2 --variants default,GPUQR_LARFB_TF32=0,GPUQR_LARFB_TF32_MIN_N=256 > "$w/geqrf22.txt" 2>&1; echo "2^22 rc $?"
grep -E "^[ds] " "$w/geqrf22.txt"
stamp
