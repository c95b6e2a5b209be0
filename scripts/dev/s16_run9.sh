#!/usr/bin/env bash
# Session 16, ninth call (code of run 8): the tall-skinny grid at m = 2^18 and 2^22 (issue 4's
# benchmark rows not measured this session), and the stall reasons of the two DMMA Gram passes
# at 1048576 x 128 (where R alone's time goes now).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 120 ncu --section WarpStateStats --section SchedulerStats --section Occupancy -k regex:dmma_gram_kernel --launch-count 2 $B --baseline none --m 1048576 --n 128 --precision d --methods automatic --forms rb --repeat 1 > "$w/ncu_stalls.txt" 2>&1; echo "ncu rc $?"
grep -E "dmma_gram_kernel<|Stall|Warp Cycles|Issue Slot|Eligible|No Eligible|Active Warps" "$w/ncu_stalls.txt" | head -60
stamp
timeout 400 $B --m 262144,4194304 --n 16,32,64,128,256,512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 --json "$w/tsqr_m.jsonl" | tee "$w/tsqr_m.txt" | grep -E "^[ds] |failed"
stamp
