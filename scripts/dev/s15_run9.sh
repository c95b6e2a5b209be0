#!/usr/bin/env bash
# Session 15, ninth call (after the last CUDA edit: the AH panel's Gram pass with up to 2048
# partials on tall panels, summed by segments): every CUDA test, memcheck and racecheck on the
# tall AH panels, issue 4's grid at m = 2^20 against cuSOLVER, the dense tester.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench gpuqr_tester
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:GraphCache*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]" "$w/tests_cuda.log" | head -8; grep -B3 -A12 "Failure" "$w/tests_cuda.log" | head -40
stamp
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelsTooTall*cuda_double:*PanelQrAhMatchesGeqr2OrDeclines*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 150 $TS --m 1048576 --n 16,32,64,128,256,512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 --json "$w/tsqr.jsonl" > "$w/tsqr.txt" 2>&1; echo "tsqr rc $?"
grep -vE "^#|^$" "$w/tsqr.txt" | head -50
stamp
timeout 60 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf,gels --precision d,s --dim 1024,4096,65536x1024 --repeat 3 > "$w/tester.txt" 2>&1; echo "tester rc $?"
grep -E "^geqrf|^gels" "$w/tester.txt"
stamp
