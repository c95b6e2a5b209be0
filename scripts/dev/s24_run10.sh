#!/usr/bin/env bash
# Session 24, tenth call (the final code of run 9): issue 4's whole benchmark grid against
# cuSOLVER in one call (m = 2^18, 2^20, 2^22; n = 16 .. 1024; FP64 and FP32; R alone, the
# explicit Q and geqrf's form), JSON lines too.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 430 $B --m 262144,1048576,4194304 --n 16,32,64,128,256,512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 --json "$w/tsqr_grid.jsonl" > "$w/tsqr_grid.txt" 2>&1; echo "grid rc $?"
grep -E "^[ds] |failed|copy bandwidth" "$w/tsqr_grid.txt"
cp "$w/tsqr_grid.txt" "$w/tsqr_grid.jsonl" "$out/"
stamp
