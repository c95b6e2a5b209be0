#!/usr/bin/env bash
# Session 19, run 4 (the final code): the sparse tests, then the issue 9 table. The small
# problems in both modes on our GPU, our CPU and SuiteSparseQR (best of 2 after a warm-up);
# the large grids on our GPU (best of 3 after a warm-up) and SuiteSparseQR once each.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_sparse_gpu_bench
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Sparse*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -30
stamp
bench=$b/bench/gpuqr_sparse_gpu_bench
timeout 240 $bench --mode both --warmup 1 --repeat 2 --sides gpu,cpu,spqr --matrices .carry-matrices/Groebner_id2003_aug.mtx,.carry-matrices/Franz6_id1959_aug.mtx --gen grid3d:20,grid3d:27,grid2d:700 --json "$w/bench_small.jsonl" > "$w/bench_small.txt" 2>&1; echo "== small rc $?"
grep -vE "^ *BLAS and|^intensity|^x_gpu" "$w/bench_small.txt" | grep -vE "gpu parts|gpu enqueue" | tail -n 30
stamp
one() { local tag=$1; shift; timeout 150 $bench --json "$w/$tag.jsonl" "$@" > "$w/$tag.txt" 2>&1; echo "== $tag rc $?"; grep -E "^grid3d|gpu parts" "$w/$tag.txt"; }
one cold45 --sides gpu --gen grid3d:45 --mode kept --warmup 0 --repeat 1
one gpu_large --sides gpu --gen grid3d:38,grid3d:45 --mode both --warmup 1 --repeat 3
stamp
one spqr_large --sides spqr --gen grid3d:38,grid3d:45 --mode both --warmup 0 --repeat 1
