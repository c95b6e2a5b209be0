#!/usr/bin/env bash
# Session 35 run 5 (H100; run 6 calls it with EXTRA_DEFAULT=1, a third default call at 2^22,
# and was given the same warm H100): the final code (run 2's; run 4's
# variants reverted). The streamed TF32 Gram kernel's tests and the panels driver's on this
# card, then FP64 geqrf's form at 2^22 and 2^20, n = 512 and 1024, against cuSOLVER, the kernel
# on and off (GPUQR_GRAM_LOW_STREAMED=0) alternated twice in one process.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
timeout 150 $T --gtest_filter='*GramLow*:*TsqrMethods.GeqrfByCholeskyPanels*cuda*:*TsqrMethods.GeqrfPanelsMerge*cuda*' > "$w/tests1.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|^\[  PASSED" "$w/tests1.log" | head; cp "$w/tests1.log" "$out/"
stamp
TS=$b/bench/gpuqr_tsqr_bench
V=default,GPUQR_GRAM_LOW_STREAMED=0
timeout 240 $TS --m 4194304 --n 512,1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --variants $V,$V${EXTRA_DEFAULT:+,default} > "$out/bench_d22.txt" 2>&1; echo "bench 2^22 rc $?"
grep -E "^d " "$out/bench_d22.txt"
stamp
timeout 100 $TS --m 1048576 --n 512,1024 --precision d --methods automatic --forms geqrf --repeat 5 --variants $V,$V > "$out/bench_d20.txt" 2>&1; echo "bench 2^20 rc $?"
grep -E "^d " "$out/bench_d20.txt"
stamp
