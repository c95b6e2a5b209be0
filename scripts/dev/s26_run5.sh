#!/usr/bin/env bash
# Session 26, fifth call (H200): two ways to spend less on the panels of FP64 geqrf's form,
# same run: the panels' CholeskyQR2 in single-pass form (GPUQR_CHOLQR_PANEL_SINGLE_PASS=1: W
# never stored) and the first Gram matrix in TF32 (GPUQR_CHOLQR_LOW_GRAM_FROM=128: the panels'
# first Gram matrix a preconditioner), at 2^20 and 2^22 rows (the latter at the power cap).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
V=default,GPUQR_CHOLQR_PANEL_SINGLE_PASS=1,GPUQR_CHOLQR_LOW_GRAM_FROM=128,default
$TS --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --repeat 5 --variants $V | tee "$out/bench_d20.txt"
stamp
GPUQR_CHOLQR_PANEL_SINGLE_PASS=1 $TS --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --repeat 5 --baseline none --variants GPUQR_CHOLQR_LOW_GRAM_FROM=128 | tee -a "$out/bench_d20.txt"
stamp
$TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --variants $V | tee "$out/bench_d22.txt"
stamp
GPUQR_CHOLQR_PANEL_SINGLE_PASS=1 $TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --baseline none --variants GPUQR_CHOLQR_LOW_GRAM_FROM=128 | tee -a "$out/bench_d22.txt"
stamp
