#!/usr/bin/env bash
# Session 17, eighth call: the b x b kernel's T by rows in one warp (full panels) and G with a
# thread's loads shared across its entries. The tests that run the AH panel, racecheck and
# memcheck on its twin test, the phase trace, panel times, issue 3's tester.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_panel_bench gpuqr_tester
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*BlockedQR*:*Dense*:*HouseholderQRTest*:*CudaGraphReplay*:*QrUpdate*:*Tsqr*:*SparseQR*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests.log" | head -20
stamp
for tool in racecheck memcheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelQrAhMatchesGeqr2OrDeclines*cuda_double' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
P=$b/bench/gpuqr_panel_bench
timeout 60 $P --trace 1 --h 1024 > "$w/trace.txt" 2>&1; cat "$w/trace.txt"
timeout 60 $P --h 96,1024,4096 --repeat 30 > "$w/panel.txt" 2>&1; cat "$w/panel.txt"
stamp
T=$b/bench/gpuqr_tester
timeout 150 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/tester_checked.txt" 2>&1; echo "tester checked rc $?"
grep -E "^(geqrf|orgqr|gels) " "$w/tester_checked.txt" | awk '{print $1, $2, $5, $8, $11, $12}'
timeout 120 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 8192,16384 --repeat 2 --warmup 1 --no-check > "$w/tester_large.txt" 2>&1; echo "tester large rc $?"
grep -E "^geqrf " "$w/tester_large.txt" | awk '{print $1, $2, $5, $8, $11, $12}'
stamp
