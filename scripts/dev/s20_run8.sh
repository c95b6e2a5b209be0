#!/usr/bin/env bash
# Session 20, eighth call (after the review of duplicates: the cluster launches of panel_qr.cu
# and panel_qr_ah_step.cu through one helper, and clang-format): every CUDA test of the test
# binary again, the AH step's twin test with it on, geqrf 1024 / 4096 against cuSOLVER and
# geqrf's form at 2^20 x 1024.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_tsqr_bench
timeout 330 $b/tests/gpuqr_tests --gtest_filter='-*cpu*' > "$w/tests_all.log" 2>&1; echo "all CUDA tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests_all.log" | head -8
stamp
T=$b/bench/gpuqr_tester
timeout 60 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,4096 --repeat 5 --warmup 2 > "$w/tester.txt" 2>&1; echo "tester rc $?"
grep -E '^geqrf ' $w/tester.txt | awk '{printf "%s %s%s %s/%s=%s\n", $1, $2, $5, $8, $11, $13}'
timeout 60 $b/bench/gpuqr_tsqr_bench --m 1048576 --n 1024 --precision d,s --methods automatic --forms geqrf --repeat 3 > "$w/tsqr.txt" 2>&1; echo "tsqr rc $?"
grep -E "^[ds] " "$w/tsqr.txt"
stamp
