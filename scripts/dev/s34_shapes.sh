#!/usr/bin/env bash
# Prepared in session 33 for the next device call: issue 3's whole shape list on the final
# code, ours against cuSOLVER in one run (the large shapes were last measured in session 17):
# square 1024-4096 with graphs off and on (five repeats), then 8192, 16384, Kerr's 2:1 shapes
# and 65536 x 1024 (two repeats, accuracy checks off: they were checked on the small shapes),
# geqrf, geqrf + orgqr and least squares, both precisions. Then issue 4's last shortfall on
# the same code: FP64 geqrf's form at 2^22 x 1024 (session 26 run 7's command, no variants).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tester gpuqr_tsqr_bench
X=$b/bench/gpuqr_tester
timeout 100 $X --backend cuda --baseline cusolver --graph both --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$out/tester_small.txt" 2>&1; echo "small rc $?"
grep -E "^(geqrf|orgqr|gels) " "$out/tester_small.txt"
stamp
timeout 250 $X --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 8192,16384,8192x4096,16384x8192,65536x1024 --repeat 2 --warmup 1 --no-check > "$out/tester_large.txt" 2>&1; echo "large rc $?"
grep -E "^(geqrf|orgqr|gels) " "$out/tester_large.txt"
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 90 $TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 > "$out/tsqr_d22.txt" 2>&1; echo "tsqr rc $?"; cat "$out/tsqr_d22.txt" | tail -8
stamp
