#!/usr/bin/env bash
# Session 17, fourth call: four warps by default with block barriers (run 3's named barrier
# drew racecheck reports), the AH panel from 96 rows. Dense, twin and update tests, racecheck
# and memcheck on the AH twin test, traces, geqrf / orgqr / gels against cuSOLVER.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_panel_bench gpuqr_tester
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*BlockedQR*:*Dense*:*HouseholderQRTest*:*CudaGraphReplay*:*QrUpdate*:*Tsqr*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests.log" | head -20
stamp
for tool in racecheck memcheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelQrAhMatchesGeqr2OrDeclines*cuda_double' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
P=$b/bench/gpuqr_panel_bench
timeout 60 $P --trace 1 --h 128,1024,65536 > "$w/trace.txt" 2>&1; cat "$w/trace.txt"
timeout 60 $P --h 64,96,128,1024 --repeat 30 > "$w/panel.txt" 2>&1; cat "$w/panel.txt"
stamp
T=$b/bench/gpuqr_tester
timeout 200 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096,8192 --repeat 5 --warmup 2 > "$w/tester.txt" 2>&1; echo "tester rc $?"
grep -E "^(geqrf|orgqr|gels) " "$w/tester.txt" | awk '{print $1, $2, $5, $8, $11, $12}'
stamp
