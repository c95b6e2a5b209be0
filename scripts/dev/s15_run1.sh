#!/usr/bin/env bash
# Session 15, first call (no code change since session 14): issue 4's wide tall-skinny cases
# (m = 2^20, n = 256, 512, 1024) by every route, ours against cuSOLVER in the same run:
# CholeskyQR2 (automatic) and the dense blocked Householder QR (householder), with the
# outer block of the latter at 128 (default) and 256.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
timeout 200 $TS --m 1048576 --n 256,512,1024 --precision d,s --methods automatic,householder --forms rb,explicit,geqrf --repeat 3 > "$w/tsqr_wide.txt" 2>&1; echo "wide rc $?"
grep -vE "^#|^$" "$w/tsqr_wide.txt" | head -60
stamp
GPUQR_NB_OUTER=256 timeout 120 $TS --m 1048576 --n 512,1024 --precision d,s --methods householder --forms geqrf --repeat 3 > "$w/tsqr_wide_nb256.txt" 2>&1; echo "nb256 rc $?"
grep -vE "^#|^$" "$w/tsqr_wide_nb256.txt" | head -20
stamp
