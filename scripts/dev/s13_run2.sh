#!/usr/bin/env bash
# Session 13, second call: add_rows_chained hands out tickets by antidiagonals of (chunk, tile)
# (was chunk-major). Update tests, the add bench.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench gpuqr_tester
timeout 120 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins*:*QrUpdateTest*cuda*' > "$w/tests_update.log" 2>&1; echo "update tests rc $?"
grep -E "^\[  FAILED|PASSED" "$w/tests_update.log" | head; grep -B3 -A12 "Failure" "$w/tests_update.log" | head -60
stamp
timeout 100 $b/bench/gpuqr_update_bench --only add --repeat 2 > "$w/update_add_chained.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add_chained.txt"
stamp
