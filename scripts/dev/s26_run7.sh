#!/usr/bin/env bash
# Session 26, seventh, ninth and tenth calls (each asked for an H200; the seventh and ninth
# got the warm H100): run 6's A/B there: FP64 geqrf's form with the panels' lean
# CholeskyQR2 (default) and without (GPUQR_CHOLQR_PANEL_LEAN=0), alternated, against cuSOLVER
# in the same run, at 2^20 and 2^22 rows; FP32 at 2^20 (its path unchanged) for the table.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
V=default,GPUQR_CHOLQR_PANEL_LEAN=0,default,GPUQR_CHOLQR_PANEL_LEAN=0
$TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --variants $V | tee "$out/bench_d22.txt"
stamp
$TS --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --repeat 5 --variants $V | tee "$out/bench_d20.txt"
stamp
$TS --m 1048576 --n 1024 --precision s --methods automatic --forms geqrf --repeat 3 | tee "$out/bench_s20.txt"
stamp
