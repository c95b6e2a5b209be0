#!/usr/bin/env bash
# Session 17, third call: Algorithm 2 by four warps (GPUQR_AH_WARP=4, one named barrier a
# step) against one warp (1) and the block (0): tests (the AH twin test runs all three),
# racecheck, traces, panel times, geqrf against cuSOLVER.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_panel_bench gpuqr_tester
GPUQR_AH_WARP=4 timeout 200 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*BlockedQR*:*Dense*:*HouseholderQRTest*:*CudaGraphReplay*:*QrUpdate*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests.log" | head -20
stamp
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelQrAhMatchesGeqr2OrDeclines*cuda_double' > "$w/san_racecheck.log" 2>&1; echo "racecheck rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$w/san_racecheck.log" | head -4
stamp
P=$b/bench/gpuqr_panel_bench
for m in 0 1 4; do
  GPUQR_AH_WARP=$m timeout 60 $P --trace 1 --h 1024 > "$w/trace_warp$m.txt" 2>&1; cat "$w/trace_warp$m.txt"
done
for m in 1 4; do
  GPUQR_AH_WARP=$m timeout 90 $P --h 96,128,192,256,512,1024,4096 --repeat 30 > "$w/panel_warp$m.txt" 2>&1; echo "warp $m"; cat "$w/panel_warp$m.txt"
done
stamp
T=$b/bench/gpuqr_tester
for cfg in "4 -1" "1 -1" "4 96"; do
  set -- $cfg
  if [ "$2" = "-1" ]; then unset GPUQR_PANEL_AH_MIN_ROWS; else export GPUQR_PANEL_AH_MIN_ROWS=$2; fi
  GPUQR_AH_WARP=$1 timeout 120 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096,8192 --repeat 5 > "$w/tester_warp$1_min$2.txt" 2>&1; echo "tester warp $1 min rows $2 rc $?"
  grep -E "geqrf" "$w/tester_warp$1_min$2.txt" | awk '{print $2, $5, $8, $11, $12}'
done
unset GPUQR_PANEL_AH_MIN_ROWS
stamp
