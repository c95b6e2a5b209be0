#!/usr/bin/env bash
# Session 29, run 11 (after the last CUDA edit: Algorithm 2's four-warp versions share their
# end, warps_finish): the kernel twin tests (every mode against LAPACK), the dense tests, and
# the b x b kernel's phase clocks for modes 4 and 7.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_panel_bench
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*cuda*:*Dense.*cuda*:*BlockedQR.*cuda*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head; grep -B3 -A12 "Failure" "$w/tests.log" | head -30; cp "$w/tests.log" "$out/"
for m in 4 7; do GPUQR_AH_WARP=$m timeout 60 $b/bench/gpuqr_panel_bench --trace 1 --h 1024 --precision d,s 2>&1 | grep trace | sed "s/^/warp $m: /"; done
stamp
