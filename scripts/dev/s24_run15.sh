#!/usr/bin/env bash
# Session 24, fifteenth call, after the last CUDA edit (larfb's two float branches merged, no
# change of behaviour): the larfb 3xTF32 test, the CholeskyQR-panel geqrf tests and the larfb
# twins, then FP32 geqrf's form at 2^20 x 1024 on/off against cuSOLVER in the same run.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*LarfbTf32*:*TsqrMethods.GeqrfByCholeskyPanels*cuda*:*KernelTwins*Larfb*cuda*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure| u, " "$w/tests.log" | head -20
stamp
timeout 100 $b/bench/gpuqr_tsqr_bench --m 1048576 --n 1024 --precision s --methods automatic --forms geqrf --repeat 3 --variants default,GPUQR_LARFB_TF32=0 > "$w/geqrf20.txt" 2>&1; echo "bench rc $?"
grep -E "^[ds] " "$w/geqrf20.txt"
cp "$w"/tests.log "$w"/geqrf20.txt "$out/"
stamp
