#!/usr/bin/env bash
# Session 18, fourth call: page-locked slots pinned by pieces and cached (src/cuda/pinned_pool.*),
# launches without fronts merged. The sparse tests, then grid3d:45 Q-less: a cold process (first
# call), warm calls, warm without the cache (GPUQR_PINNED_CACHE_MB=0), kept mode, and SuiteSparseQR.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_sparse_gpu_bench
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Sparse*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -30
grep -E "PageLocked" "$w/sparse_tests.log" | head -4
timeout 100 compute-sanitizer --tool memcheck $b/tests/gpuqr_tests --gtest_filter='*PageLocked*:*SparseArena.CorpusAgreesWithTwin/cuda_double' > "$w/memcheck.log" 2>&1; echo "memcheck rc $?"
grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/memcheck.log" | head -5
stamp
bench=$b/bench/gpuqr_sparse_gpu_bench
one() { local tag=$1; shift; timeout 150 env "$@" $bench --sides gpu --gen grid3d:45 --json "$w/$tag.jsonl" > "$w/$tag.txt" 2>&1; echo "== $tag rc $?"; grep -E "^grid3d|gpu parts|gpu enqueue" "$w/$tag.txt"; }
one cold --mode qless --warmup 0 --repeat 1
one warm --mode qless --warmup 1 --repeat 3
one warm_nocache GPUQR_PINNED_CACHE_MB=0 --mode qless --warmup 1 --repeat 3
one warm_nomerge GPUQR_SPARSE_MERGE=0 --mode qless --warmup 1 --repeat 3
one kept --mode kept --warmup 1 --repeat 1
stamp
timeout 150 $bench --mode qless --warmup 0 --repeat 1 --sides spqr --gen grid3d:45 > "$w/spqr.txt" 2>&1; echo "== spqr rc $?"
grep -E "^grid3d" "$w/spqr.txt"
