#!/usr/bin/env bash
# Written in session 18 for the branch kept-block-reflectors (not run yet: no device time
# left). One call: the sparse tests (among them the new block copy's twin test), memcheck on
# the new copies, then kept mode on the large grids with 2-D block copies (default) and with
# a copy per column segment (GPUQR_SPARSE_BLOCK_COPY=0), Q-less for regression, and
# SuiteSparseQR once. Compare with main's run 6 of session 18 (docs/PERF.md).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_sparse_gpu_bench
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Sparse*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -30
timeout 100 compute-sanitizer --tool memcheck $b/tests/gpuqr_tests --gtest_filter='*CopyBlockToHost*:*PageLocked*:*SparseArena.CorpusAgreesWithTwin/cuda_double:*SparseArena.GridBothRoutes/cuda_double' > "$w/memcheck.log" 2>&1; echo "memcheck rc $?"
grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/memcheck.log" | head -5
stamp
bench=$b/bench/gpuqr_sparse_gpu_bench
one() { local tag=$1 envs=$2; shift 2; timeout 150 env $envs $bench --json "$w/$tag.jsonl" "$@" > "$w/$tag.txt" 2>&1; echo "== $tag rc $?"; grep -E "^grid3d|gpu parts|gpu enqueue" "$w/$tag.txt"; }
one kept_block "" --sides gpu --gen grid3d:38,grid3d:45 --mode kept --warmup 1 --repeat 2
one kept_segments "GPUQR_SPARSE_BLOCK_COPY=0" --sides gpu --gen grid3d:38,grid3d:45 --mode kept --warmup 1 --repeat 2
one qless "" --sides gpu --gen grid3d:45 --mode qless --warmup 1 --repeat 2
stamp
one spqr "" --sides spqr --gen grid3d:38,grid3d:45 --mode both --warmup 0 --repeat 1
