#!/usr/bin/env bash
# Session 20, seventh call (the final code): every CUDA test of the test binary, the
# tall-skinny table at 2^20 rows (n = 256 to 1024, both precisions, all three forms) against
# cuSOLVER, and issue 3's tester at 1024 / 4096 (the AH step off, the default).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_tsqr_bench
timeout 330 $b/tests/gpuqr_tests --gtest_filter='-*cpu*' > "$w/tests_all.log" 2>&1; echo "all CUDA tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests_all.log" | head -20
stamp
B=$b/bench/gpuqr_tsqr_bench
timeout 150 $B --m 1048576 --n 256,512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 --json "$w/tsqr_m20.json" > "$w/tsqr_m20.txt" 2>&1; echo "tsqr bench rc $?"
grep -E "^[ds] |failed|bandwidth" "$w/tsqr_m20.txt"
stamp
T=$b/bench/gpuqr_tester
timeout 60 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,4096 --repeat 5 --warmup 2 > "$w/tester.txt" 2>&1; echo "tester rc $?"
grep -E '^(geqrf|orgqr|gels) ' $w/tester.txt | awk '{printf "%s %s%s %s/%s=%s\n", $1, $2, $5, $8, $11, $13}'
stamp
