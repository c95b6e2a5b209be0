#!/usr/bin/env bash
# Session 18, first call: where grid3d:45's Q-less GPU factorization spends its time now
# (issue 9). GPU side only; the breakdown rows, then the per-part device times
# (GPUQR_SPARSE_PROFILE=1), and the lanes / dense-threshold knobs.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_sparse_gpu_bench
bench=$b/bench/gpuqr_sparse_gpu_bench
run() { local tag=$1; shift; env "$@" timeout 120 $bench --mode qless --warmup 1 --repeat 2 --sides gpu --gen grid3d:45 --json "$w/$tag.jsonl" > "$w/$tag.txt" 2>&1; echo "== $tag rc $?"; grep -vE "^ *BLAS and|^intensity" "$w/$tag.txt" | tail -n 12; stamp; }
run base
run profile GPUQR_SPARSE_PROFILE=1
run lanes8 GPUQR_SPARSE_LANES=8
run dense512 GPUQR_SPARSE_DENSE_MIN=512
run dense2048 GPUQR_SPARSE_DENSE_MIN=2048
timeout 60 $bench --mode kept --warmup 0 --repeat 1 --sides gpu --gen grid3d:45 > "$w/kept.txt" 2>&1; echo "== kept rc $?"; grep -vE "^ *BLAS and|^intensity" "$w/kept.txt" | tail -n 12
