#!/usr/bin/env bash
# Session 18, seventh call: kept mode's copier threads (GPUQR_SPARSE_COPIERS 4 / 12 / 8, host
# code), grid3d:45, ours only (SuiteSparseQR: run 6); the bench checks each result's residual.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_sparse_gpu_bench
bench=$b/bench/gpuqr_sparse_gpu_bench
for c in 4 12 8; do
timeout 60 env GPUQR_SPARSE_COPIERS=$c $bench --sides gpu --gen grid3d:45 --mode kept --warmup 1 --repeat 2 > "$w/copiers$c.txt" 2>&1; echo "== copiers $c rc $?"
grep -E "^grid3d|gpu parts" "$w/copiers$c.txt"
done
stamp
