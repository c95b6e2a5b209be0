#!/usr/bin/env bash
# Session 35 run 8 (the warm H200 of run 7; run as this one command line): R alone with A
# borrowed (`rb`: run 7's `r` copies A into the object and found no room for it beside the
# bench's two copies) and the explicit Q again, FP64 2^22 x 1024.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench >/dev/null
timeout 200 $b/bench/gpuqr_tsqr_bench --m 4194304 --n 1024 --precision d --methods automatic --forms rb,explicit --repeat 2 --copies 2.2 > $out/bench_rb_explicit.txt 2>&1; echo rc $?; grep -E "^d |device" $out/bench_rb_explicit.txt
