#!/usr/bin/env bash
# Session 26, first call: (1) cublasLt's algorithms against cublasDgemm on the trailing
# update's FP64 GEMM shapes (scripts/dev/gemm_lt_probe.cu, m = 2^20 and 2^22); (2) the
# product frame's packed-X variants (branch product-frame's probe, prebuilt); both while the
# library builds; (3) FP64 geqrf's form 2^20 x 1024 with the panels' single-pass CholeskyQR2
# (GPUQR_CHOLQR_PANEL_SINGLE_PASS=1) against the default, cuSOLVER in the same run.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"
( .carry-bin/gemm_lt_probe 1048576 > "$out/gemm_lt_20.txt" 2>&1
  .carry-bin/gemm_lt_probe 4194304 > "$out/gemm_lt_22.txt" 2>&1
  timeout 200 .carry-bin/pf_probe > "$out/pf_probe.txt" 2>&1 ) &
probes=$!
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
wait $probes; stamp
TS=$b/bench/gpuqr_tsqr_bench
$TS --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --variants default,GPUQR_CHOLQR_PANEL_SINGLE_PASS=1 | tee "$out/bench_d20.txt"
stamp
$TS --m 1048576 --n 1024 --precision s --methods automatic --forms geqrf --repeat 3 --baseline none --variants default,GPUQR_CHOLQR_PANEL_SINGLE_PASS=1 | tee -a "$out/bench_d20.txt"
stamp
