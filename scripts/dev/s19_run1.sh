#!/usr/bin/env bash
# Session 19, run 1: kept mode's copy after the merge of kept-block-reflectors. The sparse
# tests and memcheck on the arena's copies, then grid3d:45 kept with the two-half bounce
# buffers and R's rows taken out meanwhile (default), without both (the merged branch's
# path), with 8 copier threads, with huge pages from 4 MiB; one traced call; Q-less for
# regression; SuiteSparseQR once.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_sparse_gpu_bench
echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled) defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag)"
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Sparse*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -30
timeout 100 compute-sanitizer --tool memcheck $b/tests/gpuqr_tests --gtest_filter='*CopyBlockToHost*:*SparseArena.CorpusAgreesWithTwin/cuda_double:*SparseArena.GridBothRoutes/cuda_double:*SparseArena.CarriedRhsKeptAndQless/cuda_double' > "$w/memcheck.log" 2>&1; echo "memcheck rc $?"
grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/memcheck.log" | head -5
stamp
bench=$b/bench/gpuqr_sparse_gpu_bench
one() { local tag=$1 envs=$2; shift 2; timeout 150 env $envs $bench --json "$w/$tag.jsonl" "$@" > "$w/$tag.txt" 2>&1; echo "== $tag rc $?"; grep -E "^grid3d|gpu parts|gpu enqueue|reflector copies" "$w/$tag.txt"; }
g45="--sides gpu --gen grid3d:45 --mode kept --warmup 1 --repeat 2"
one kept_new "GPUQR_X=1" $g45
one kept_merged "GPUQR_SPARSE_DOUBLE_BUFFER=0 GPUQR_SPARSE_OVERLAP_ROWS=0" $g45
one kept_c8 "GPUQR_SPARSE_COPIERS=8" $g45
one kept_huge4 "GPUQR_HUGE_FROM_MB=4" $g45
one kept_c8_huge4 "GPUQR_SPARSE_COPIERS=8 GPUQR_HUGE_FROM_MB=4" $g45
one kept_trace "GPUQR_SPARSE_TRACE=1" --sides gpu --gen grid3d:45 --mode kept --warmup 0 --repeat 1
one kept_38 "GPUQR_X=1" --sides gpu --gen grid3d:38 --mode kept --warmup 1 --repeat 2
one qless "GPUQR_X=1" --sides gpu --gen grid3d:45 --mode qless --warmup 1 --repeat 2
stamp
one spqr "GPUQR_X=1" --sides spqr --gen grid3d:45 --mode both --warmup 0 --repeat 1
