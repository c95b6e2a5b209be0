#!/usr/bin/env bash
# Session 22, fourth call (same code as run 3, build kept): the tall-skinny table against
# cuSOLVER in one run: 2^20 x 256 / 512 / 1024 in both precisions, FP32 at 2^18 and 2^22 x
# 1024.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
timeout 240 $TS --m 1048576 --n 256,512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 > "$w/tsqr20.txt" 2>&1; echo "tsqr 2^20 rc $?"
grep -E "^[ds] |copy" "$w/tsqr20.txt"
stamp
timeout 240 $TS --m 262144,4194304 --n 1024 --precision s --methods automatic --forms rb,explicit,geqrf --repeat 2 > "$w/tsqr_m.txt" 2>&1; echo "tsqr m rc $?"
grep -E "^[ds] " "$w/tsqr_m.txt"
stamp
