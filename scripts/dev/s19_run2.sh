#!/usr/bin/env bash
# Session 19, run 2: kept reflectors copied from their launch's end, R's rows taken out on a
# thread of their own, huge pages from 4 MiB. The sparse tests, memcheck on the arena, then
# grid3d:45 kept: default, run 1's order (GPUQR_SPARSE_COPY_AT=1 GPUQR_SPARSE_ROWS_EARLY=0),
# huge pages from 64 MiB, one traced call; Q-less: default and rows on this thread; the large
# grids in both modes (best of 3 after a warm-up) and SuiteSparseQR once each.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_sparse_gpu_bench
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Sparse*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -30
timeout 100 compute-sanitizer --tool memcheck $b/tests/gpuqr_tests --gtest_filter='*CopyBlockToHost*:*SparseArena.CorpusAgreesWithTwin/cuda_double:*SparseArena.GridBothRoutes/cuda_double:*SparseArena.CarriedRhsKeptAndQless/cuda_double' > "$w/memcheck.log" 2>&1; echo "memcheck rc $?"
grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/memcheck.log" | head -5
stamp
bench=$b/bench/gpuqr_sparse_gpu_bench
one() { local tag=$1 envs=$2; shift 2; timeout 150 env $envs $bench --json "$w/$tag.jsonl" "$@" > "$w/$tag.txt" 2>&1; echo "== $tag rc $?"; grep -E "^grid3d|gpu parts|gpu enqueue|reflector copies" "$w/$tag.txt"; }
g45="--sides gpu --gen grid3d:45 --warmup 1 --repeat 2"
one kept_new "GPUQR_X=1" $g45 --mode kept
one kept_run1 "GPUQR_SPARSE_COPY_AT=1 GPUQR_SPARSE_ROWS_EARLY=0" $g45 --mode kept
one kept_huge64 "GPUQR_HUGE_FROM_MB=64" $g45 --mode kept
one kept_trace "GPUQR_SPARSE_TRACE=1" --sides gpu --gen grid3d:45 --mode kept --warmup 0 --repeat 1
one qless_new "GPUQR_X=1" $g45 --mode qless
one qless_rows0 "GPUQR_SPARSE_ROWS_EARLY=0" $g45 --mode qless
stamp
one gpu_large "GPUQR_X=1" --sides gpu --gen grid3d:38,grid3d:45 --mode both --warmup 1 --repeat 3
stamp
one spqr_large "GPUQR_X=1" --sides spqr --gen grid3d:38,grid3d:45 --mode both --warmup 0 --repeat 1
