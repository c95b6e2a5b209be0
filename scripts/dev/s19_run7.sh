#!/usr/bin/env bash
# Session 19, run 7 (final): SparsePlacement. The sparse tests (among them the automatic
# placement on the device), the CLI's end-to-end checks with the GPU present, the demo's
# solve, and a sweep of the placement's bars' neighbourhood: automatic against forced device
# is not a bench knob, so the bench's GPU side (forced) and CPU side on grid2d:80..160 and
# grid3d:10..16 again.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_cli gpuqr_sparse_gpu_bench
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Sparse*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -30
grep -E "AutomaticPlacement|PlacementRule" "$w/sparse_tests.log" | grep -E "OK|FAILED"
timeout 60 bash tests/test_cli.sh $b/tools/gpuqr . > "$w/cli.log" 2>&1; echo "cli rc $?"; tail -3 "$w/cli.log"
timeout 30 $b/tools/gpuqr lstsq data/matrices/ash219.mtx > "$w/demo.txt" 2>&1; echo "demo rc $?"; cat "$w/demo.txt" | head -30
stamp
bench=$b/bench/gpuqr_sparse_gpu_bench
timeout 150 $bench --mode kept --warmup 1 --repeat 3 --sides gpu,cpu --gen grid2d:80,grid2d:120,grid2d:160,grid3d:10,grid3d:12,grid3d:14,grid3d:16 > "$w/sweep.txt" 2>&1; echo "== sweep rc $?"
grep -E "^grid" "$w/sweep.txt"
