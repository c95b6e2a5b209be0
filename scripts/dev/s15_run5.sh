#!/usr/bin/env bash
# Session 15, fifth call: CholeskyQR's products past 128 columns by block columns
# (src/cuda/triangle_gemm.cu: the Gram matrix's upper half, X's nonzero blocks; Q = A X by
# them too, so the explicit Q runs single-pass there). Tests of the leaves and the methods;
# the tall-skinny grid (automatic = CholeskyQR2, and householder), then the householder
# geqrf form with outer blocks of 256.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
timeout 280 $b/tests/gpuqr_tests --gtest_filter='*TallTimesUpper*:*TsqrCudaTwins*:*Tsqr*cuda*:*GramKernels*:*GramTf32*:*KernelTwins*:*BlockedQR*cuda*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]" "$w/tests.log" | head -8; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 260 $TS --m 1048576 --n 256,512,1024 --precision d,s --methods automatic,householder --forms rb,explicit,geqrf --repeat 3 > "$w/tsqr.txt" 2>&1; echo "tsqr rc $?"
grep -vE "^#|^$" "$w/tsqr.txt" | head -44
stamp
GPUQR_NB_OUTER=256 timeout 60 $TS --m 1048576 --n 512,1024 --precision d,s --methods householder --forms geqrf --repeat 2 > "$w/tsqr_nb256.txt" 2>&1; echo "nb256 rc $?"
grep -vE "^#|^$" "$w/tsqr_nb256.txt" | tail -5
stamp
