#!/usr/bin/env bash
# Session 25, second call (H200): where FP64 geqrf's form at 2^20 x 1024 loses its time there.
# Session 24's ncu (run 13) ran at base clocks; here the kernels at the clocks they get
# (--clock-control none), so that their sum can be held against the wall time, and the bench
# against cuSOLVER in the same call.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
$TS --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 | tee "$out/bench_d20.txt"
stamp
$TS --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --baseline none --variants default,GPUQR_LOOKAHEAD=0 | tee -a "$out/bench_d20.txt"
stamp
timeout 240 ncu --clock-control none --metrics gpu__time_duration.sum,launch__grid_size --csv $TS --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --repeat 1 --baseline none > "$w/ncu.csv" 2> "$w/ncu.err"; echo "ncu rc $?"
python3 scripts/dev/ncu_by_grid.py "$w/ncu.csv" 30 | tee "$out/ncu_by_grid.txt"
gzip -c "$w/ncu.csv" > "$out/ncu_d_geqrf.csv.gz"
stamp
