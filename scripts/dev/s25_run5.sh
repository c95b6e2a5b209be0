#!/usr/bin/env bash
# Session 25, fifth call (H100, warm after run 4): issue 4's n = 512 / 1024 cells against
# cuSOLVER, FP64 2^22 x 1024 geqrf's form measured on the H100 for the first time (A and its
# pristine copy, 64 GiB, fit beside cuSOLVER's workspace: --copies 2.2), and the same-run A/B
# of orhr_col's one-block top kernel (GPUQR_ORHR_FUSED=0) where its launches weigh most.
# (Its 2^20 x 512 / 1024 cells against cuSOLVER were cut before the call: device time.)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
$TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 | tee "$out/bench_d22.txt"
stamp
$TS --m 262144,1048576 --n 256,512,1024 --precision d,s --methods automatic --forms geqrf --repeat 3 --baseline none --variants default,GPUQR_ORHR_FUSED=0 | tee "$out/bench_ab.txt"
stamp
