#!/usr/bin/env bash
# Session 21, third call: the Gram matrix by recursive halves (triangle_gemm.cu) and the
# explicit Q of wide CholeskyQR2 in two steps (Q = W R_2^{-1} out of place): the tall-skinny
# and CholeskyQR tests on CUDA, then the bench at 2^20 x 512 / 1024 and 2^18 x 1024 against
# cuSOLVER; TF32 GEMM rates (gemm_probe.cu) for the FP32 decision.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*Tsqr*cuda*:*Cholesky*cuda*:*Gram*cuda*:*TallTimes*cuda*:*Tf32*cuda*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests_tsqr.log" | head -12
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 300 $TS --m 1048576 --n 512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 > "$w/tsqr20.txt" 2>&1; echo "tsqr 2^20 rc $?"
grep -E "^[ds] " "$w/tsqr20.txt"
stamp
timeout 120 $TS --m 262144 --n 1024 --precision d,s --methods automatic --forms rb,explicit --repeat 3 > "$w/tsqr18.txt" 2>&1; echo "tsqr 2^18 rc $?"
grep -E "^[ds] " "$w/tsqr18.txt"
stamp
/usr/local/cuda/bin/nvcc -std=c++17 -O2 -arch=sm_90 -o $w/gemm_probe scripts/dev/gemm_probe.cu -lcublas && $w/gemm_probe | grep -E "^tf32|^copy|gram recursive|square" | tee $w/gemm_probe.txt
stamp
