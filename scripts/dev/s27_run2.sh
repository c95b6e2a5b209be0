#!/usr/bin/env bash
# Session 27, second call: larfb_small with its row loop reworked (a thread a row in the
# update, four rows of loads in flight in W), its twin test; then issue 3's tester, ours
# against cuSOLVER in each call: default (larfb_small to 2048 rows), larfb_small off, to 4096
# rows, and the outer T's merges by the merge kernel or the batched GEMMs instead of cuBLAS
# TRMMs (the default below 2048 rows), two rounds.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
T=$b/bench/gpuqr_tester
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*BlockedQR*-*cpu*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED \]" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -60
stamp
run() { env "$@" timeout 120 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*]"; grep -E '^geqrf ' "$w/t.txt" | awk '{printf "  %s %s ours %s cusolver %s ratio %s\n", $2, $5, $8, $11, $13}'; cat "$w/t.txt" >> "$out/tester_all.txt"; }
for round in 1 2; do
  run GPUQR_LARFB_SMALL=1
  run GPUQR_LARFB_SMALL=0
  run GPUQR_LARFB_SMALL_ROWS=4096
  run GPUQR_LARFT_MERGE=kernel
  run GPUQR_LARFT_MERGE=gemm
done
stamp
timeout 60 ncu --metrics gpu__time_duration.sum --csv $T --backend cuda --baseline none --op geqrf --precision d --dim 1024 --repeat 1 --warmup 0 --no-check > "$w/ncu.csv" 2>&1; echo "ncu rc $?"
cp "$w/ncu.csv" "$out/ncu_geqrf1024.csv"
python3 scripts/dev/ncu_by_name.py "$w/ncu.csv" 8
stamp
