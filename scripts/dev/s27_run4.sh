#!/usr/bin/env bash
# Session 27, fourth call (final code): larfb_small leaves FP32 calls to the 3xTF32 products
# while larfb_tf32_mode(1) forces them (run 3's one failure); the tests that run the changed
# leaves (larfb, larft's merges, the AH panel, the tall-skinny routes, the dense and graph
# paths); then issue 3's tester (geqrf, orgqr, gels) against cuSOLVER in the same call, and the
# AH scaling's A/B at 1024 (GPUQR_AH_SCALE_LANES=1 = one lane a row) alternated.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
T=$b/bench/gpuqr_tester
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*TsqrMethods*:*KernelTwins*:*BlockedQR*:*Dense*:*CudaGraphReplay*:*LarfbTf32*-*cpu*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED \]" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
cp "$w/tests.log" "$out/tests.log"
stamp
timeout 150 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$out/tester.txt" 2>&1; echo "tester rc $?"
grep -E '^(geqrf|orgqr|gels) ' "$out/tester.txt" | awk '{printf "  %s %s %s ours %s cusolver %s ratio %s %s\n", $1, $2, $5, $8, $11, $13, $NF}'
stamp
run() { env "$@" timeout 40 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024 --repeat 7 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^geqrf ' "$w/t.txt" | awk '{printf "%s %s/%s=%s  ", $5, $8, $11, $13}')"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2 3; do run GPUQR_AH_SCALE_LANES=4; run GPUQR_AH_SCALE_LANES=1; done
stamp
