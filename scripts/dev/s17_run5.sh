#!/usr/bin/env bash
# Session 17, fifth call: the AH panel's kernels and the Householder kernel after them as a
# programmatic-dependent chain (pdl.cuh), A/B with GPUQR_PDL=0 in the same run; the tests
# that run the panel (dense, twins, graphs, updates, tall-skinny), memcheck and racecheck.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_panel_bench gpuqr_tester
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*BlockedQR*:*Dense*:*HouseholderQRTest*:*CudaGraphReplay*:*GraphCache*:*QrUpdate*:*Tsqr*:*BadInput*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests.log" | head -20
stamp
for tool in racecheck memcheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelQrAhMatchesGeqr2OrDeclines*cuda_double:*BlockedQR*Geqrf*cuda_double' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
P=$b/bench/gpuqr_panel_bench
for p in 0 1; do
  GPUQR_PDL=$p timeout 60 $P --h 128,512,1024,4096,65536 --repeat 30 > "$w/panel_pdl$p.txt" 2>&1; echo "pdl $p"; cat "$w/panel_pdl$p.txt"
done
stamp
T=$b/bench/gpuqr_tester
for p in 1 0; do
  GPUQR_PDL=$p timeout 150 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096,8192 --repeat 5 --graph both > "$w/tester_pdl$p.txt" 2>&1; echo "tester pdl $p rc $?"
  grep -E "^geqrf " "$w/tester_pdl$p.txt" | head -20
done
stamp
