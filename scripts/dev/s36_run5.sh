#!/usr/bin/env bash
# Session 36 run 5 (final code): what block-Jacobi's decision costs where it is declined
# (2^20 x 1024, random: predicted row sum ~0.7), the knob alternated three times in one
# process, R alone and the explicit Q, both precisions, against cuSOLVER.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
V=default,GPUQR_CHOLQR_BLOCK_JACOBI=0
timeout 200 $TS --m 1048576 --n 1024 --precision d,s --methods automatic --forms rb,explicit --repeat 5 --variants $V,$V,$V > "$out/bench_20x1024.txt" 2>&1; echo "bench rc $?"
grep -E "^[ds] " "$out/bench_20x1024.txt"
stamp
