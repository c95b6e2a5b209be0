#!/usr/bin/env bash
# Session 24, twelfth call, H200: FP64 geqrf's form at 2^22 x 1024 (2.85x in run 11) with the
# outer block (GPUQR_CHOLQR_OUTER) and look-ahead varied, and at 2^20 for the H100 comparison.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 250 $B --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 2 --copies 3.3 --variants default,GPUQR_CHOLQR_OUTER=384,GPUQR_CHOLQR_OUTER=512,GPUQR_CHOLQR_PANEL_WIDTH=64,default > "$w/d22.txt" 2>&1; echo "d22 rc $?"
grep -E "^[ds] |failed" "$w/d22.txt"
stamp
timeout 100 $B --m 1048576 --n 1024 --precision d --methods automatic --forms rb,explicit,geqrf --repeat 3 > "$w/d20.txt" 2>&1; echo "d20 rc $?"
grep -E "^[ds] |failed" "$w/d20.txt"
cp "$w"/d22.txt "$w"/d20.txt "$out/"
stamp
