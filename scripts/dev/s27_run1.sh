#!/usr/bin/env bash
# Session 27, first call: larfb_small (one launch for the blocked QR's in-panel updates:
# k <= 32 reflectors on a short C) against LAPACK's larfb (twin test), the dense and blocked
# CUDA tests on it, then issue 3's tester with it on (default) and off (GPUQR_LARFB_SMALL=0)
# alternately, cuSOLVER in the same runs.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
T=$b/bench/gpuqr_tester
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*BlockedQR*:*Dense*:*CudaGraphReplay*:*HouseholderQR*-*cpu*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED \]" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -60
cp "$w/tests.log" "$out/tests.log"
stamp
run() { env "$@" timeout 120 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*]"; grep -E '^geqrf ' "$w/t.txt"; cat "$w/t.txt" >> "$out/tester_all.txt"; }
head -5 "$w/t.txt" 2>/dev/null
run GPUQR_LARFB_SMALL=1
run GPUQR_LARFB_SMALL=0
run GPUQR_LARFB_SMALL=1
run GPUQR_LARFB_SMALL=0
stamp
timeout 60 ncu --metrics gpu__time_duration.sum --csv $T --backend cuda --baseline none --op geqrf --precision d --dim 1024 --repeat 1 --warmup 0 --no-check > "$w/ncu.csv" 2>&1; echo "ncu rc $?"
cp "$w/ncu.csv" "$out/ncu_geqrf1024.csv"
python3 scripts/dev/ncu_by_name.py "$w/ncu.csv" 16
stamp
