#!/usr/bin/env bash
# Session 25, third call (H200): the one-block signed LU and U^{-1} of orhr_col's top block
# (orhr_top_kernel): the orhr_col / CholeskyQR-panel tests, then FP64 geqrf's form against
# cuSOLVER at 2^20 and 2^22 x 1024 and the same-run A/B with GPUQR_ORHR_FUSED=0.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests; TS=$b/bench/gpuqr_tsqr_bench
timeout 300 $T --gtest_filter='*TsqrCudaTwins*:*TsqrMethods*:*LarfbTf32*-*cpu*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests ran" "$w/tests.log" | tail -15; cp "$w/tests.log" "$out/tests.log"
stamp
$TS --m 1048576 --n 1024 --precision d,s --methods automatic --forms geqrf --repeat 3 | tee "$out/bench.txt"
stamp
$TS --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --baseline none --variants default,GPUQR_ORHR_FUSED=0,default,GPUQR_ORHR_FUSED=0 | tee -a "$out/bench.txt"
stamp
$TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 2 --copies 3.3 | tee -a "$out/bench.txt"
stamp
