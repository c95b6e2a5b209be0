#!/usr/bin/env bash
# Session 27, third call: every CUDA test of the test binary on the code with larfb_small,
# the batched-GEMM merges of T everywhere and the AH panel's scaling by four lanes a row; then
# issue 3's tester: the scaling's A/B (GPUQR_AH_SCALE_LANES=1 = one lane a row, as before)
# against the default, ours against cuSOLVER in each call.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
T=$b/bench/gpuqr_tester
timeout 430 $b/tests/gpuqr_tests --gtest_filter='-*cpu*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED \]" "$w/tests_cuda.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_cuda.log" | head -60
gzip -c "$w/tests_cuda.log" > "$out/tests_cuda.log.gz"
stamp
run() { env "$@" timeout 60 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*]"; grep -E '^geqrf ' "$w/t.txt" | awk '{printf "  %s %s ours %s cusolver %s ratio %s\n", $2, $5, $8, $11, $13}'; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
run GPUQR_AH_SCALE_LANES=4
run GPUQR_AH_SCALE_LANES=1
run GPUQR_AH_SCALE_LANES=4
run GPUQR_AH_SCALE_LANES=1
stamp
