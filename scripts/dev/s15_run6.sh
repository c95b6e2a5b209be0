#!/usr/bin/env bash
# Session 15, sixth call (after the last CUDA edit, with run 7 on the same machine): every CUDA
# test, and memcheck on the new paths (block-column products, tall AH panels, finite check).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench gpuqr_tester
timeout 330 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:GraphCache*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]" "$w/tests_cuda.log" | head -8; grep -B3 -A12 "Failure" "$w/tests_cuda.log" | head -40
stamp
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*BlockColumnsPast*cuda*:*GramOfUpperProduct*:*NanOrInfFoundAnywhere*cuda*:*PanelsTooTall*cuda_double' > "$w/san_memcheck.log" 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/san_memcheck.log" | head -4
stamp
