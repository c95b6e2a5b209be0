#!/usr/bin/env bash
# Session 26, twelfth call (H100): the FP64 geqrf's-form cells of issue 4's grid that the
# panel route serves and this session had not timed on the final code (2^18 x 1024,
# 2^22 x 512), with 2^22 x 1024 again, lean / not lean, against cuSOLVER in the same run.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
$TS --m 262144,4194304 --n 512,1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --variants default,GPUQR_CHOLQR_PANEL_LEAN=0 | tee "$out/bench_d_grid.txt"
stamp
