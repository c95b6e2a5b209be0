#!/usr/bin/env bash
# Session 19, run 3: kept reflector copies cut into items of consecutive blocks (a large
# front spread over the copier threads). The sparse tests, memcheck and racecheck on the
# arena, then grid3d:45 kept: default, 8 copier threads, huge pages from 64 MiB, the
# previous run's path (one item per front is not a knob: compare with run 2), a traced call;
# Q-less; SuiteSparseQR once on grid3d:45.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_sparse_gpu_bench
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Sparse*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -30
for tool in memcheck racecheck; do
timeout 120 compute-sanitizer --tool $tool $b/tests/gpuqr_tests --gtest_filter='*SparseArena.KeptLargeFronts*/cuda_double:*SparseArena.CorpusAgreesWithTwin/cuda_double:*SparseArena.CarriedRhsKeptAndQless/cuda_double' > "$w/$tool.log" 2>&1; echo "$tool rc $?"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/$tool.log" | head -5
done
stamp
bench=$b/bench/gpuqr_sparse_gpu_bench
one() { local tag=$1 envs=$2; shift 2; timeout 150 env $envs $bench --json "$w/$tag.jsonl" "$@" > "$w/$tag.txt" 2>&1; echo "== $tag rc $?"; grep -E "^grid3d|gpu parts|gpu enqueue|reflector copies|stage 0 tail" "$w/$tag.txt"; }
g45="--sides gpu --gen grid3d:45 --warmup 1 --repeat 3"
one kept_new "GPUQR_X=1" $g45 --mode kept
one kept_c8 "GPUQR_SPARSE_COPIERS=8" $g45 --mode kept
one kept_huge64 "GPUQR_HUGE_FROM_MB=64" $g45 --mode kept
one kept_trace "GPUQR_SPARSE_TRACE=1" --sides gpu --gen grid3d:45 --mode kept --warmup 1 --repeat 1
one qless_new "GPUQR_X=1" $g45 --mode qless
stamp
one spqr45 "GPUQR_X=1" --sides spqr --gen grid3d:45 --mode both --warmup 0 --repeat 1
