#!/usr/bin/env bash
# Session 17, first call: the AH panel's Algorithm 2 by one warp with every exchange a shuffle
# (GPUQR_AH_WARP=1) against the thread block (default), and the unrolled G / V^T V phases:
# twin tests, clock64 phase traces, panel times, geqrf against cuSOLVER both ways.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_panel_bench gpuqr_tester
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*BlockedQR*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests.log" | head -20
stamp
P=$b/bench/gpuqr_panel_bench
for m in 0 1; do
  GPUQR_AH_WARP=$m timeout 60 $P --trace 1 --h 256,1024,4096 > "$w/trace_warp$m.txt" 2>&1; cat "$w/trace_warp$m.txt"
done
for m in 0 1; do
  GPUQR_AH_WARP=$m timeout 90 $P --h 128,192,256,384,512,1024,4096,65536 --repeat 30 > "$w/panel_warp$m.txt" 2>&1; echo "warp $m"; cat "$w/panel_warp$m.txt"
done
stamp
T=$b/bench/gpuqr_tester
for m in 1 0; do
  GPUQR_AH_WARP=$m timeout 120 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096,8192 --repeat 5 > "$w/tester_warp$m.txt" 2>&1; echo "tester warp $m rc $?"
  grep -E "geqrf" "$w/tester_warp$m.txt" | head -12
done
stamp
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelQrAhMatchesGeqr2OrDeclines*cuda_double' > "$w/san_racecheck.log" 2>&1; echo "racecheck rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$w/san_racecheck.log" | head -4
stamp
