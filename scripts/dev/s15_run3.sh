#!/usr/bin/env bash
# Session 15, third call: where the dense blocked geqrf's time goes on 1048576 x 1024 and
# 1048576 x 512 (FP64), per kernel (ncu, one factorization, no baseline), with the split
# off (run 2: it changed nothing there and cost 65536 x 1024 time).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tester
T=$b/bench/gpuqr_tester
for dim in 1048576x1024 1048576x256; do
  GPUQR_LONG_SPLIT=0 timeout 200 ncu --metrics gpu__time_duration.sum,launch__grid_size --csv $T --backend cuda --baseline none --op geqrf --precision d --dim $dim --repeat 1 --warmup 0 --no-check > "$w/ncu_$dim.csv" 2> "$w/ncu_$dim.err"; echo "ncu $dim rc $?"
  python3 scripts/dev/ncu_by_grid.py "$w/ncu_$dim.csv" 30
  stamp
done
GPUQR_LONG_SPLIT=0 timeout 60 $T --backend cuda --baseline none --op geqrf --precision d --dim 1048576x1024,1048576x256 --repeat 2 --no-check 2>&1 | grep geqrf
