#!/usr/bin/env bash
# Session 21, first call (measurements only): geqrf's form by CholeskyQR panels on square and
# 2:1 / 4:1 shapes (GPUQR_CHOLQR_PANELS=1 now forces the route for any m >= n), against
# cuSOLVER geqrf in the same run; R alone by the route against CholeskyQR2 at 2^20 x 1024;
# what an 8 GiB allocation costs per call.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tester gpuqr_tsqr_bench
/usr/local/cuda/bin/nvcc -O2 -arch=sm_90 -o $w/alloc_probe scripts/dev/alloc_probe.cu && $w/alloc_probe | tee $w/alloc.txt
T=$b/bench/gpuqr_tester
TS=$b/bench/gpuqr_tsqr_bench
timeout 90 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/tester.txt" 2>&1; echo "tester rc $?"
grep -E '^geqrf ' $w/tester.txt | awk '{printf "%s %s%s %s/%s=%s\n", $1, $2, $5, $8, $11, $13}'
stamp
for mn in "1024 1024" "2048 1024" "4096 1024" "2048 2048" "4096 4096" "8192 1024"; do
  set -- $mn
  timeout 120 $TS --m $1 --n $2 --precision d,s --methods automatic --forms geqrf --repeat 7 --variants default,GPUQR_CHOLQR_PANELS=1 > "$w/sq_$1_$2.txt" 2>&1; echo "sq $1 $2 rc $?"
  grep -E "^[ds] " "$w/sq_$1_$2.txt"
done
stamp
export GPUQR_CHOLQR_PANELS=1
timeout 150 $TS --m 1024,2048 --n 1024 --precision d,s --methods automatic --forms geqrf --repeat 7 --variants GPUQR_CHOLQR_PANEL_WIDTH=64,GPUQR_CHOLQR_OUTER=128,GPUQR_CHOLQR_OUTER=512,GPUQR_LOOKAHEAD=0 > "$w/sq_knobs.txt" 2>&1; echo "knobs rc $?"
grep -E "^[ds] " "$w/sq_knobs.txt"
unset GPUQR_CHOLQR_PANELS
stamp
timeout 200 $TS --m 1048576 --n 1024 --precision d --methods automatic --forms rb,geqrf --repeat 3 --variants default,GPUQR_R_HOUSEHOLDER=1 > "$w/rb.txt" 2>&1; echo "rb rc $?"
grep -E "^[ds] " "$w/rb.txt"
stamp
