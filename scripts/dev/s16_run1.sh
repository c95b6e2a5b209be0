#!/usr/bin/env bash
# Session 16, first call (code of session 15 plus the tsqr bench's --baseline none): where
# 1048576 x 128's CholeskyQR2 time goes (issue 4's FP64 n = 128 targets), per kernel (ncu) and
# against the wall clock; the DMMA kernels' pipe utilization; the mma shape on the H200.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 120 $B --m 1048576 --n 64,128 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 7 | tee "$w/tsqr.txt"
stamp
for f in rb explicit geqrf; do
  timeout 120 ncu --metrics gpu__time_duration.sum,launch__grid_size --csv $B --baseline none --m 1048576 --n 128 --precision d --methods automatic --forms $f --repeat 1 > "$w/ncu_d128_$f.csv" 2> "$w/ncu_d128_$f.err"; echo "ncu $f rc $?"
  python3 scripts/dev/ncu_by_grid.py "$w/ncu_d128_$f.csv" 14
done
stamp
timeout 120 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis -k regex:dmma --launch-count 4 $B --baseline none --m 1048576 --n 128 --precision d --methods automatic --forms rb --repeat 1 > "$w/ncu_d128_sol.txt" 2>&1; echo "ncu sol rc $?"
grep -E "dmma_|Duration|Throughput|Pipe|Occupancy|Registers|Shared Memory Config|Block Limit|Warp Cycles|Issued Ipc|L1/TEX Hit|Eligible|Active Warps" "$w/ncu_d128_sol.txt" | head -120
stamp
for s in 884 1684 1688; do
  echo "GPUQR_GRAM_DMMA=$s"; GPUQR_GRAM_DMMA=$s timeout 60 $B --baseline none --m 1048576 --n 128 --precision d --methods automatic --forms rb,explicit --repeat 7 | grep "^d "
done
stamp
