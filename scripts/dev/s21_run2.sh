#!/usr/bin/env bash
# Session 21, second call: cuBLAS GEMM rates on CholeskyQR2's shapes at 2^20 x 1024
# (scripts/dev/gemm_probe.cu).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
/usr/local/cuda/bin/nvcc -std=c++17 -O2 -arch=sm_90 -o /tmp/gemm_probe scripts/dev/gemm_probe.cu -lcublas && /tmp/gemm_probe | tee $OUT/gemm_probe.txt
