#!/usr/bin/env bash
# Session 24, eighth call (after run 7: C -= V W in launches of at most 2^21 rows, grid.y): larfb's FP32 W = V^T C and C -= V W by CUTLASS's 3xTF32 GEMMs
# (src/cuda/larfb_tf32.cu, CUTLASS headers carried in .carry-cutlass). Its tests and the
# tall-skinny / larfb twins, then geqrf's form with it on and off (GPUQR_LARFB_TF32=0) at
# 2^20 and 2^22 rows against cuSOLVER, FP64 unchanged as a control.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
timeout 240 $T --gtest_filter='*LarfbTf32*:*TsqrMethods*cuda*:*KernelTwins*Larfb*cuda*:*TsqrCudaTwins*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure|Expected|actual|SGEMM .* u" "$w/tests.log" | head -40
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 150 $TS --m 1048576 --n 256,512,1024 --precision s --methods automatic --forms geqrf --repeat 3 --variants default,GPUQR_LARFB_TF32=0,GPUQR_LARFB_TF32_MIN_N=256 > "$w/geqrf20.txt" 2>&1; echo "2^20 rc $?"
grep -E "^[ds] " "$w/geqrf20.txt"
stamp
timeout 200 $TS --m 4194304 --n 1024 --precision s --methods automatic --forms geqrf --repeat 2 --variants default,GPUQR_LARFB_TF32=0,default > "$w/geqrf22.txt" 2>&1; echo "2^22 rc $?"
grep -E "^[ds] " "$w/geqrf22.txt"
stamp
