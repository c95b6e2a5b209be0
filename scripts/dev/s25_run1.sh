#!/usr/bin/env bash
# Session 25, first call: the FP64 streamed product Q = A X (n = 128) as it is against 64-row
# chunks with 32 x 32 warp items and X packed by bands (scripts/dev/dmma_product_probe.cu).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv,noheader
( sleep 35; nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader ) &
nvcc -std=c++17 -O3 --expt-relaxed-constexpr -arch=sm_90 -I. -o /tmp/dmma_probe scripts/dev/dmma_product_probe.cu -lcublas || exit 1
timeout 300 /tmp/dmma_probe | tee "$out/dmma_product_probe.txt"
