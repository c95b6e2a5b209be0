#!/usr/bin/env bash
# Session 15, seventh call (same code as run 6): issue 4's grid at m = 2^20 (n = 16 .. 1024,
# both precisions, automatic) against cuSOLVER; the block width of the block-column products
# at 64 and 256 (n = 512, 1024, FP64); the dense tester (issue 3's shapes) for regressions.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench gpuqr_tester
TS=$b/bench/gpuqr_tsqr_bench
timeout 240 $TS --m 1048576 --n 16,32,64,128,256,512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 --json "$w/tsqr.jsonl" > "$w/tsqr.txt" 2>&1; echo "tsqr rc $?"
grep -vE "^#|^$" "$w/tsqr.txt" | head -50
stamp
for tb in 64 256; do
  GPUQR_TRI_BLOCK=$tb timeout 60 $TS --m 1048576 --n 512,1024 --precision d --methods automatic --forms rb,explicit --repeat 2 > "$w/tsqr_tb$tb.txt" 2>&1; echo "tb $tb rc $?"
  grep -E "^d " "$w/tsqr_tb$tb.txt"
done
stamp
timeout 100 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf,gels --precision d,s --dim 1024,4096,65536x1024 --repeat 3 > "$w/tester.txt" 2>&1; echo "tester rc $?"
grep -E "^geqrf|^gels" "$w/tester.txt"
stamp
