#!/usr/bin/env bash
# Session 23, fourth call: V's tall part of orhr_col_of_product by tall_times_upper (streamed
# kernel / block columns; GPUQR_ORHR_STREAMED=0 the old GEMMs). The twin and tall-skinny CUDA
# tests, then geqrf's form with it on and off against cuSOLVER in the same run.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
timeout 220 $T --gtest_filter='*TsqrCudaTwins*:*TsqrMethods*cuda*:*GramLow*cuda*:*TsqrBadInput*cuda*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure|Expected|actual" "$w/tests.log" | head -30
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 120 $TS --m 1048576 --n 256,512,1024 --precision d,s --methods automatic --forms geqrf --repeat 3 --variants default,GPUQR_ORHR_STREAMED=0 > "$w/geqrf20.txt" 2>&1; echo "2^20 rc $?"
grep -E "^[ds] " "$w/geqrf20.txt"
stamp
timeout 150 $TS --m 4194304 --n 1024 --precision s --methods automatic --forms geqrf --repeat 2 --variants default,GPUQR_ORHR_STREAMED=0 > "$w/geqrf22.txt" 2>&1; echo "2^22 rc $?"
grep -E "^[ds] " "$w/geqrf22.txt"
stamp
