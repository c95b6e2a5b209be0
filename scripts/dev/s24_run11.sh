#!/usr/bin/env bash
# Session 24, eleventh call, on an H200 (141 GB): the one cell of issue 4's grid an H100 cannot
# hold with the baseline beside it, FP64 2^22 x 1024 (32 GiB a copy; --copies 3.3 lets the
# bench try it: the pristine and working copies and one work matrix), with FP32 2^22 x 1024
# and FP64 2^22 x 512 on the same device for comparison.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 300 $B --m 4194304 --n 1024 --precision d --methods automatic --forms rb,geqrf,explicit --repeat 2 --copies 3.3 > "$w/d22_1024.txt" 2>&1; echo "d rc $?"
grep -E "^[ds] |failed|copy bandwidth" "$w/d22_1024.txt"
stamp
timeout 150 $B --m 4194304 --n 512,1024 --precision s --methods automatic --forms rb,explicit,geqrf --repeat 2 > "$w/s22.txt" 2>&1; echo "s rc $?"
grep -E "^[ds] |failed" "$w/s22.txt"
cp "$w"/d22_1024.txt "$w"/s22.txt "$out/"
stamp
