#!/usr/bin/env bash
# Session 35 run 2: the streamed TF32 Gram kernel for FP64 gram_low (run 1's) with its
# tests FP64-only: geqrf's form FP64 2^22 x 1024 against cuSOLVER with the kernel on and off
# alternated four times in one process; the other FP64 cells that take the panels (2^18 and
# 2^20, n = 512 and 1024); then every CUDA test as time allows.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
V=default,GPUQR_GRAM_LOW_STREAMED=0
timeout 200 $TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --variants $V,$V,$V,$V > "$out/bench_d22_ab.txt" 2>&1; echo "bench 2^22 rc $?"
grep -E "^d " "$out/bench_d22_ab.txt"
stamp
timeout 100 $TS --m 262144,1048576 --n 512,1024 --precision d --methods automatic --forms geqrf --repeat 5 --variants $V,$V > "$out/bench_grid.txt" 2>&1; echo "bench grid rc $?"
grep -E "^d " "$out/bench_grid.txt"
stamp
full_suite 590
stamp
