#!/usr/bin/env bash
# Session 16, eleventh call: TallSkinnyQR's `automatic` takes the blocked Householder QR for
# FP32 n >= 512, m >= 2^20 (host code). The tall-skinny CUDA tests (the new end-to-end test
# among them), then R alone (rb) on the wide FP32 shapes, and the FP64 ones (unchanged) beside.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*Tsqr*:*TallTimesUpper*:-*cpu*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure|WideTallSkinny" "$w/tests_tsqr.log" | head -20
stamp
timeout 240 $B --m 262144,1048576,4194304 --n 256,512,1024 --precision s,d --methods automatic,cholesky_qr2 --forms rb --repeat 3 | tee "$w/tsqr_rb.txt" | grep -E "^[sd] |failed"
stamp
