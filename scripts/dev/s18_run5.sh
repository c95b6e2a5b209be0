#!/usr/bin/env bash
# Session 18, fifth call (run 4's bench part, whose env call was wrong): grid3d:45 Q-less: a
# cold process (first call), warm calls, warm without the cache (GPUQR_PINNED_CACHE_MB=0),
# without the merge (GPUQR_SPARSE_MERGE=0), kept mode, and SuiteSparseQR twice.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_sparse_gpu_bench
bench=$b/bench/gpuqr_sparse_gpu_bench
one() { local tag=$1 envs=$2; shift 2; timeout 150 env $envs $bench --sides gpu --gen grid3d:45 --json "$w/$tag.jsonl" "$@" > "$w/$tag.txt" 2>&1; echo "== $tag rc $?"; grep -E "^grid3d|gpu parts|gpu enqueue" "$w/$tag.txt"; }
one cold "" --mode qless --warmup 0 --repeat 1
one warm "" --mode qless --warmup 1 --repeat 3
one warm_nocache "GPUQR_PINNED_CACHE_MB=0" --mode qless --warmup 1 --repeat 3
one warm_nomerge "GPUQR_SPARSE_MERGE=0" --mode qless --warmup 1 --repeat 3
one kept "" --mode kept --warmup 1 --repeat 1
stamp
timeout 150 $bench --mode qless --warmup 0 --repeat 2 --sides spqr --gen grid3d:45 > "$w/spqr.txt" 2>&1; echo "== spqr rc $?"
grep -E "^grid3d" "$w/spqr.txt"
