#!/usr/bin/env bash
# Session 28, sixth call (final code: the b x b kernel as at the session's start; only the
# AH mode's environment parsing moved into panel_qr_ah_warp_factor): every CUDA test, issue 3's
# tester against cuSOLVER, and the b x b kernel with 128 threads (GPUQR_AH_THREADS=128, a
# barrier of the four working warps only) against 256, alternated.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
T=$b/bench/gpuqr_tester
timeout 150 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$out/tester.txt" 2>&1; echo "tester rc $?"
grep -E '^(geqrf|orgqr|gels) ' "$out/tester.txt" | awk '{printf "  %s %s %s ours %s cusolver %s ratio %s %s\n", $1, $2, $5, $8, $11, $13, $NF}'
run() { env "$@" timeout 60 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^geqrf ' "$w/t.txt" | awk '{printf "%s%s %s/%s=%s  ", $5, $2, $8, $11, $13}')"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2; do run GPUQR_AH_THREADS=256; run GPUQR_AH_THREADS=128; done
stamp
timeout 450 $b/tests/gpuqr_tests --gtest_filter='-*cpu*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED \]" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
cp "$w/tests.log" "$out/tests.log"
stamp
