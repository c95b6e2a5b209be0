#!/usr/bin/env bash
# Session 24, fourteenth call: the larfb 3xTF32 test after its last edit (no skip without
# CUTLASS: the path must then be absent, bit for bit), in the usual build and in one
# configured with GPUQR_WITH_CUTLASS=OFF, with the geqrf-by-CholeskyQR-panels tests.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests
F='*LarfbTf32*:*TsqrMethods.GeqrfByCholeskyPanels*cuda*'
timeout 120 $b/tests/gpuqr_tests --gtest_filter="$F" > "$w/tests_cutlass.log" 2>&1; echo "with CUTLASS rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure| u, |CUTLASS" "$w/tests_cutlass.log" | head -20
stamp
cmake -S . -B build-nocut -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DGPUQR_WITH_CUTLASS=OFF -DCMAKE_PREFIX_PATH=$ss > "$w/configure_nocut.log" 2>&1 || exit 1
grep -E "gpuqr: CUTLASS" "$w/configure_nocut.log"
cmake --build build-nocut --parallel 16 --target gpuqr_tests > "$w/build_nocut.log" 2>&1 || { grep error -A5 "$w/build_nocut.log" | head; exit 1; }
stamp
timeout 120 build-nocut/tests/gpuqr_tests --gtest_filter="$F" > "$w/tests_nocut.log" 2>&1; echo "without CUTLASS rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure|CUTLASS" "$w/tests_nocut.log" | head -20
cp "$w"/tests_cutlass.log "$w"/tests_nocut.log "$out/"
stamp
