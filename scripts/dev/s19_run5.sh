#!/usr/bin/env bash
# Session 19, run 5: bounce buffers for every kept problem, sized to it. The sparse tests,
# memcheck on the kept arena tests, the small problems in both modes (ours and SuiteSparseQR,
# best of 2 after a warm-up), kept with the old threshold (GPUQR_SPARSE_BOUNCE_FROM_MB=1000),
# and grid3d:45 kept once more.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_sparse_gpu_bench
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Sparse*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -30
timeout 120 compute-sanitizer --tool memcheck $b/tests/gpuqr_tests --gtest_filter='*SparseArena.KeptLargeFronts*/cuda_double:*SparseArena.CorpusAgreesWithTwin/cuda_double:*SparseArena.CarriedRhsKeptAndQless/cuda_double:*SparseArena.GridBothRoutes/cuda_double' > "$w/memcheck.log" 2>&1; echo "memcheck rc $?"
grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/memcheck.log" | head -5
stamp
bench=$b/bench/gpuqr_sparse_gpu_bench
small="--matrices .carry-matrices/Groebner_id2003_aug.mtx,.carry-matrices/Franz6_id1959_aug.mtx --gen grid3d:20,grid3d:27,grid2d:700"
timeout 200 $bench --mode both --warmup 1 --repeat 2 --sides gpu,spqr $small --json "$w/bench_small.jsonl" > "$w/bench_small.txt" 2>&1; echo "== small rc $?"
grep -vE "^ *BLAS and|^intensity|^x_gpu" "$w/bench_small.txt" | grep -vE "gpu parts|gpu enqueue" | tail -n 22
stamp
timeout 100 env GPUQR_SPARSE_BOUNCE_FROM_MB=1000 $bench --mode kept --warmup 1 --repeat 2 --sides gpu $small > "$w/small_old.txt" 2>&1; echo "== small kept, old threshold rc $?"
grep -E "^(grid|Groeb|Franz)" "$w/small_old.txt"
timeout 100 $bench --mode kept --warmup 1 --repeat 3 --sides gpu --gen grid3d:45 > "$w/kept45.txt" 2>&1; echo "== kept45 rc $?"
grep -E "^grid3d|gpu parts" "$w/kept45.txt"
