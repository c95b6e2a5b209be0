#!/usr/bin/env bash
# Session 6, first call: the sparse QR on the GPU (issue 9). Build with Debian 12's SuiteSparse
# carried (carry: .carry-suitesparse, .carry-matrices; see README.md here), every CUDA test
# (the new sparse leaves and the stage-arena driver included) and the CPU arena tests,
# compute-sanitizer on the sparse ones, then gpuqr_sparse_gpu_bench: ours on the GPU, ours on
# the CPU (all cores) and SuiteSparseQR, same run, same matrices.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nproc; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
grep -iE "suitesparse|spqr|colamd" "$w/configure.log" | head -5
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_sparse_gpu_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*Sparse*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED \]" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -60
echo "t $(( $(date +%s) - s )) s"
timeout 150 compute-sanitizer --tool memcheck $b/tests/gpuqr_tests --gtest_filter='*SparseKernelCuda*:*SparseArena.GridBothRoutes/cuda_double:*SparseArena.StagedSameResult/cuda_float' > "$w/memcheck.log" 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/memcheck.log" | head -5
timeout 100 compute-sanitizer --tool racecheck $b/tests/gpuqr_tests --gtest_filter='*SparseKernelCuda*' > "$w/racecheck.log" 2>&1; echo "racecheck rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/racecheck.log" | head -5
echo "t $(( $(date +%s) - s )) s"
timeout 200 $b/bench/gpuqr_sparse_gpu_bench --mode both --warmup 1 --repeat 2 --matrices .carry-matrices/Groebner_id2003_aug.mtx,.carry-matrices/Franz6_id1959_aug.mtx,data/matrices/lp_e226_transposed.mtx --gen grid3d:20,grid3d:27,grid2d:700 --json "$w/sparse_bench_small.jsonl" > "$w/sparse_bench_small.txt" 2>&1; echo "bench small rc $?"
tail -n 30 "$w/sparse_bench_small.txt"
echo "t $(( $(date +%s) - s )) s"
timeout 200 $b/bench/gpuqr_sparse_gpu_bench --mode qless --warmup 0 --repeat 1 --gen grid3d:20,grid3d:38,grid3d:45 --json "$w/sparse_bench_large.jsonl" > "$w/sparse_bench_large.txt" 2>&1; echo "bench large rc $?"
tail -n 12 "$w/sparse_bench_large.txt"
echo "t $(( $(date +%s) - s )) s"
timeout 100 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:*GramKernels*:*TileEngine*:*Batched*' > "$w/cuda_tests.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/cuda_tests.log" | head -10
