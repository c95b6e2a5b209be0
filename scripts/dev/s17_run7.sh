#!/usr/bin/env bash
# Session 17, seventh call (the final code): every CUDA test, racecheck and memcheck on the AH
# twin test, the AH panel's phases and times, issue 3's table against cuSOLVER.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_panel_bench gpuqr_tester
timeout 330 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:GraphCache*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests_cuda.log" | head -20
stamp
for tool in racecheck memcheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelQrAhMatchesGeqr2OrDeclines*cuda_double' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
P=$b/bench/gpuqr_panel_bench
timeout 60 $P --trace 1 --h 1024 > "$w/trace.txt" 2>&1; cat "$w/trace.txt"
timeout 60 $P --h 96,256,1024,4096 --repeat 30 > "$w/panel.txt" 2>&1; cat "$w/panel.txt"
stamp
T=$b/bench/gpuqr_tester
timeout 150 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/tester_checked.txt" 2>&1; echo "tester checked rc $?"
grep -E "^(geqrf|orgqr|gels) " "$w/tester_checked.txt" | awk '{print $1, $2, $5, $8, $11, $12}'
stamp
timeout 200 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 8192,16384,8192x4096,16384x8192,65536x1024 --repeat 2 --warmup 1 --no-check > "$w/tester_large.txt" 2>&1; echo "tester large rc $?"
grep -E "^(geqrf|orgqr|gels) " "$w/tester_large.txt" | awk '{print $1, $2, $3, $5, $8, $11, $12}'
stamp
