#!/usr/bin/env bash
# Session 20, first call: the blocked Householder QR with outer panels factored by CholeskyQR2
# + orhr_col (geqrf_cholesky_panels) on wide tall shapes. The tall-skinny CUDA tests, then
# n = 512 / 1024 against cuSOLVER with the new route (default) and without it
# (GPUQR_CHOLQR_PANELS=0) in the same run, R alone by it (GPUQR_R_HOUSEHOLDER=1) and the
# explicit Q by it + orgqr (GPUQR_EXPLICIT_HOUSEHOLDER=1).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*TsqrMethods*:*TsqrBadInput*:*TsqrCuda*:-*cpu*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure|CholeskyPanels.*OK|cholesky panels" "$w/tests_tsqr.log" | head -30
stamp
V=default,GPUQR_CHOLQR_PANELS=0,GPUQR_R_HOUSEHOLDER=1,GPUQR_EXPLICIT_HOUSEHOLDER=1
timeout 200 $B --m 1048576 --n 512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --variants $V --repeat 3 --json "$w/m20.json" | tee "$w/m20.txt" | grep -vE "^GPUQR|^CUBLAS"
stamp
timeout 90 $B --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --variants GPUQR_CHOLQR_PANEL_WIDTH=256,GPUQR_CHOLQR_PANEL_WIDTH=64 --repeat 3 | tee "$w/m20_width.txt" | grep -E "^d |failed"
stamp
timeout 200 $B --m 262144,4194304 --n 512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --variants $V --repeat 3 --json "$w/m18_22.json" | tee "$w/m18_22.txt" | grep -E "^[ds] |failed"
stamp
