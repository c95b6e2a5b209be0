#!/usr/bin/env bash
# Session 15, eighth call (same code as runs 6-7): where the blocked geqrf's time goes on
# 1048576 x 1024 FP64 now (ncu per kernel and grid), and the outer block / look-ahead knobs.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tester
T=$b/bench/gpuqr_tester
timeout 200 ncu --metrics gpu__time_duration.sum,launch__grid_size --csv $T --backend cuda --baseline none --op geqrf --precision d --dim 1048576x1024 --repeat 1 --warmup 0 --no-check > "$w/ncu.csv" 2> "$w/ncu.err"; echo "ncu rc $?"
python3 scripts/dev/ncu_by_grid.py "$w/ncu.csv" 24
stamp
for v in "GPUQR_NB_OUTER=64" "GPUQR_NB_OUTER=128" "GPUQR_NB_OUTER=256" "GPUQR_LOOKAHEAD=0"; do
  echo "$v: $(env $v timeout 60 $T --backend cuda --baseline none --op geqrf --precision d --dim 1048576x1024 --repeat 3 --no-check 2>&1 | grep -E '^geqrf' | awk '{print $8}') ms"
done
stamp
