#!/usr/bin/env bash
# Outer block size sweep for the GPU geqrf (GPUQR_NB_OUTER), ours against cuSOLVER in the same
# run. Needs the build of scripts/gpu_check.sh.   sweep_nb.sh OUTDIR
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:?}"
t="${GPUQR_BUILD_DIR:-build-gpu}/bench/gpuqr_tester"
for nb in 64 96 128 192; do
  GPUQR_NB_OUTER=$nb "$t" --backend cuda --baseline cusolver --op geqrf --precision d,s \
    --dim 1024,2048 --repeat 3 --no-check | grep -E "^geqrf" | sed "s/^/nb $nb /"
done | tee "$out/sweep_small.txt"
for nb in 128 192 256 320 384 512; do
  GPUQR_NB_OUTER=$nb "$t" --backend cuda --baseline cusolver --op geqrf --precision d,s \
    --dim 4096,8192,16384,16384x8192 --repeat 2 --no-check | grep -E "^geqrf" | sed "s/^/nb $nb /"
done | tee "$out/sweep_large.txt"
