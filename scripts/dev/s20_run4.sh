#!/usr/bin/env bash
# Session 20, fourth call: the AH step (an inner panel by QRF-AH and its update of the outer
# panel's next columns in one cluster launch, src/cuda/panel_qr_ah_step.cu) in the blocked QR.
# Its twin test first, then the dense tests, memcheck and racecheck on the twin test, then
# issue 3's tester with the step (default) and without (GPUQR_AH_STEP=0), and with graphs.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
timeout 120 $b/tests/gpuqr_tests --gtest_filter='*PanelQrUpdateStep*' > "$w/tests_step.log" 2>&1; echo "step tests rc $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure|Expected|Which is|actual" "$w/tests_step.log" | head -30
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*BlockedQR*:*Dense*:*HouseholderQRTest*:*CudaGraphReplay*:*Tsqr*:-*cpu*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$w/tests.log" | head -20
stamp
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelQrUpdateStep*cuda_double' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
T=$b/bench/gpuqr_tester
for v in 1 0; do
  GPUQR_AH_STEP=$v timeout 120 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/tester_step$v.txt" 2>&1; echo "tester step=$v rc $?"
  grep -E "^(geqrf|orgqr|gels) " "$w/tester_step$v.txt" | cut -c1-160
done
GPUQR_GRAPH=1 timeout 60 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048 --repeat 5 --warmup 2 > "$w/tester_graph.txt" 2>&1; echo "tester graph rc $?"
grep -E "^geqrf " "$w/tester_graph.txt" | cut -c1-160
stamp
