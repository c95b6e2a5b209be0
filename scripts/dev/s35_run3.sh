#!/usr/bin/env bash
# Session 35 run 3: (a) the knobs of geqrf's form by CholeskyQR panels re-measured at FP64
# 2^22 x 1024 against cuSOLVER, where the H200 runs at its power cap (the defaults were set at
# 2^20): the DMMA shape, the look-ahead, the identity merge, three panels a block; each
# alternated with the default in one process. (b) ncu --set full on the first launch of each
# streamed kernel of a panel at 2^20 x 1024 (the TF32 Gram, the product-Gram, the in-place
# product): where their frame loses against the copy rate.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
V=default,GPUQR_GRAM_DMMA=1688,default,GPUQR_LOOKAHEAD=0,default,GPUQR_MERGE_IDENTITY=0,default,GPUQR_CHOLQR_OUTER=384,default
timeout 240 $TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --variants $V > "$out/bench_d22_knobs.txt" 2>&1; echo "bench 2^22 rc $?"
grep -E "^d " "$out/bench_d22_knobs.txt"
stamp
timeout 240 ncu --set full -k regex:"tf32_gram_of_fp64|dmma_upper_product|dmma_gram_kernel" -c 3 $TS --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --repeat 1 --baseline none > "$out/ncu_full_streamed.txt" 2>&1; echo "ncu rc $?"
grep -E "^  [a-z].*\(|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Dynamic Shared|Warp Cycles Per Issued|Issue Slots Busy|L2 Hit Rate|Mem Busy|Max Bandwidth|One or More Eligible|No Eligible|Stall" "$out/ncu_full_streamed.txt" | head -80
stamp
