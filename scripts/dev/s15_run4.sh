#!/usr/bin/env bash
# Session 15, fourth call: panels too tall for the fused kernels go to the AH panel with its
# status read back (cuSOLVER's geqrf where it declines), and the driver enqueues the trailing
# update before such a panel. Tests (twins with the tall panels, blocked QR, dense, tall-skinny,
# graphs), the tall-skinny grid's householder route, the dense tester on square and tall shapes.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench gpuqr_tester
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*BlockedQR*cuda*:*Dense*cuda*:*Tsqr*cuda*:*TsqrCuda*:GraphCache*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]" "$w/tests.log" | head -8; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
grep -E "PanelsTooTall|PanelQrMatchesGeqr2" "$w/tests.log" | head -6
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 200 $TS --m 1048576 --n 256,512,1024 --precision d,s --methods householder --forms rb,explicit,geqrf --repeat 3 > "$w/tsqr_hh.txt" 2>&1; echo "tsqr rc $?"
grep -vE "^#|^$" "$w/tsqr_hh.txt" | head -30
stamp
T=$b/bench/gpuqr_tester
timeout 150 $T --backend cuda --baseline cusolver --op geqrf,gels --precision d,s --dim 1024,4096,65536x1024,1048576x512 --repeat 3 > "$w/tester.txt" 2>&1; echo "tester rc $?"
grep -E "^geqrf|^gels" "$w/tester.txt" | head -20
stamp
