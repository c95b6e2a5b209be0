#!/usr/bin/env bash
# Session 18, sixth call (the final code): the carried columns packed with R's rows. The sparse
# tests, memcheck and racecheck on the arena and the page-locked blocks, then the sparse bench:
# the small problems in both modes (ours and SuiteSparseQR, best of 2 after a warm-up), the
# large grids (ours: a cold process, then best of 3 after a warm-up; SuiteSparseQR once each).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_sparse_gpu_bench
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Sparse*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -30
for tool in memcheck racecheck; do
timeout 100 compute-sanitizer --tool $tool $b/tests/gpuqr_tests --gtest_filter='*PageLocked*:*SparseArena.CorpusAgreesWithTwin/cuda_double:*SparseArena.CarriedRhsKeptAndQless/cuda_double' > "$w/$tool.log" 2>&1; echo "$tool rc $?"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/$tool.log" | head -5
done
stamp
bench=$b/bench/gpuqr_sparse_gpu_bench
timeout 150 $bench --mode both --warmup 1 --repeat 2 --sides gpu,spqr --matrices .carry-matrices/Groebner_id2003_aug.mtx,.carry-matrices/Franz6_id1959_aug.mtx --gen grid3d:20,grid3d:27,grid2d:700 --json "$w/bench_small.jsonl" > "$w/bench_small.txt" 2>&1; echo "== small rc $?"
grep -vE "^ *BLAS and|^intensity|^x_gpu" "$w/bench_small.txt" | tail -n 30
stamp
one() { local tag=$1; shift; timeout 150 $bench --json "$w/$tag.jsonl" "$@" > "$w/$tag.txt" 2>&1; echo "== $tag rc $?"; grep -E "^grid3d|gpu parts|gpu enqueue" "$w/$tag.txt"; }
one cold45 --sides gpu --gen grid3d:45 --mode qless --warmup 0 --repeat 1
one gpu_large --sides gpu --gen grid3d:38,grid3d:45 --mode both --warmup 1 --repeat 3
stamp
one spqr_large --sides spqr --gen grid3d:38,grid3d:45 --mode both --warmup 0 --repeat 1
