#!/usr/bin/env bash
# Session 17, sixth call: the outer block again with the faster AH panel (GPUQR_NB_OUTER, ours
# alone), and the tall-skinny geqrf form at n = 512 / 1024 that runs the blocked QR's AH panels.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tester gpuqr_tsqr_bench
T=$b/bench/gpuqr_tester
for nb in 64 96 128 192 256; do
  GPUQR_NB_OUTER=$nb timeout 80 $T --backend cuda --baseline none --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 5 --no-check > "$w/sweep_nb$nb.txt" 2>&1; echo "nb $nb rc $?"
  grep -E "^geqrf " "$w/sweep_nb$nb.txt" | awk '{print $2, $5, $8}' | tr '\n' ' '; echo
done
stamp
timeout 200 $b/bench/gpuqr_tsqr_bench --m 1048576 --n 512,1024 --precision d,s --methods automatic --forms geqrf --repeat 3 > "$w/tsqr.txt" 2>&1; echo "tsqr rc $?"
grep -v '^#' "$w/tsqr.txt" | head -20
stamp
