#!/usr/bin/env bash
# Session 24, fourth call: FP32 GEMM algorithms on the trailing-update shapes of geqrf's form
# (scripts/dev/lt_probe.cu): cublasSgemm against cublasLt's heuristic list.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader
nvcc -O2 -arch=sm_90 -o /tmp/lt_probe scripts/dev/lt_probe.cu -lcublasLt -lcublas || exit 1
timeout 400 /tmp/lt_probe | tee "$out/lt_probe.txt"
