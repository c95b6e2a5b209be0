#!/usr/bin/env bash
# Session 23, third call (the code of runs 1-2): geqrf's form (Householder QR with CholeskyQR
# panels) at n = 1024 with other block-reflector and panel widths, FP32 2^20 / 2^22 and FP64
# 2^20, no baseline (runs 2's cuSOLVER times are the reference).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
V=default,GPUQR_CHOLQR_OUTER=384,GPUQR_CHOLQR_OUTER=512,GPUQR_CHOLQR_PANEL_WIDTH=64,GPUQR_CHOLQR_PANEL_WIDTH=256
timeout 150 $TS --m 1048576 --n 1024 --precision d,s --methods automatic --forms geqrf --repeat 3 --baseline none --variants $V > "$w/geqrf20.txt" 2>&1; echo "2^20 rc $?"
grep -E "^[ds] " "$w/geqrf20.txt"
stamp
timeout 200 $TS --m 4194304 --n 1024 --precision s --methods automatic --forms geqrf --repeat 2 --baseline none --variants $V > "$w/geqrf22.txt" 2>&1; echo "2^22 rc $?"
grep -E "^[ds] " "$w/geqrf22.txt"
stamp
