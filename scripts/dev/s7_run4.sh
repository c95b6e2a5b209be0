#!/usr/bin/env bash
# Session 7, fourth call (no code change after the third): racecheck on the FP64 Gram kernels
# with a longer box, and the sparse bench on the smaller problems in both modes (kept
# Householder vectors and Q-less) plus grid3d:38 in both, GPU and SuiteSparseQR in one run.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_sparse_gpu_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 130 $b/bench/gpuqr_sparse_gpu_bench --mode both --warmup 1 --repeat 2 --sides gpu,spqr --matrices .carry-matrices/Groebner_id2003_aug.mtx,.carry-matrices/Franz6_id1959_aug.mtx,data/matrices/lp_e226_transposed.mtx --gen grid3d:20,grid3d:27 --json "$w/sparse_bench_small.jsonl" > "$w/sparse_bench_small.txt" 2>&1; echo "bench small rc $?"
grep -vE "^ *BLAS and|^intensity|^x_gpu|gpu enqueue" "$w/sparse_bench_small.txt" | tail -n 30
echo "t $(( $(date +%s) - s )) s"
timeout 100 $b/bench/gpuqr_sparse_gpu_bench --mode kept --warmup 0 --repeat 1 --sides gpu,spqr --gen grid3d:38 --json "$w/sparse_bench_38kept.jsonl" > "$w/sparse_bench_38kept.txt" 2>&1; echo "bench 38 kept rc $?"
grep -vE "^ *BLAS and|^intensity|^x_gpu" "$w/sparse_bench_38kept.txt" | tail -n 6
echo "t $(( $(date +%s) - s )) s"
timeout 200 $b/tests/gpuqr_tests --gtest_filter="*GramKernels.SanitizerSized*" 2>&1 | grep -E "PASSED|FAILED" | head -3
timeout 220 compute-sanitizer --tool racecheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='Cuda/GramKernels.SanitizerSizedCasesExact/cuda_double' > "$w/san_racecheck.log" 2>&1; echo "racecheck rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$w/san_racecheck.log" | head -3
