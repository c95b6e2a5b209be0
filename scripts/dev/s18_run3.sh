#!/usr/bin/env bash
# Session 18, third call: launches that finish no front no longer waited for (GPUQR_SPARSE_MERGE,
# A/B in the same run), and the assembly leaves traced (GPUQR_SPARSE_TRACE=1: launch 0's 0.3 s).
# The sparse tests first.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_sparse_gpu_bench
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Sparse*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -30
stamp
bench=$b/bench/gpuqr_sparse_gpu_bench
GPUQR_SPARSE_TRACE=1 timeout 120 $bench --mode qless --warmup 1 --repeat 1 --sides gpu --gen grid3d:45 > "$w/trace.txt" 2> "$w/trace.err"; echo "== trace rc $?"
grep -vE "^ *BLAS and|^intensity" "$w/trace.txt" | tail -n 8
awk '/stages and schedule/{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' "$w/trace.err" | head -60
stamp
for merge in 0 1 0 1; do
timeout 120 env GPUQR_SPARSE_MERGE=$merge $bench --mode qless --warmup 1 --repeat 2 --sides gpu --gen grid3d:45 > "$w/merge$merge.txt" 2>&1; echo "== merge $merge rc $?"
grep -E "^grid3d|gpu parts|gpu enqueue" "$w/merge$merge.txt"
done
stamp
