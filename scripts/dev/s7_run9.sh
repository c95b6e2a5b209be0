#!/usr/bin/env bash
# Session 7, ninth call: kept-mode bounce buffers allocated on another thread (direct copies until ready). The
# sparse tests (the arena in kept mode against the twin), memcheck on the kept-mode arena, and
# the sparse bench in both modes (GPU and SuiteSparseQR in the same run).
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
timeout 120 $b/tests/gpuqr_tests --gtest_filter='*Sparse*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -30
timeout 80 compute-sanitizer --tool memcheck $b/tests/gpuqr_tests --gtest_filter='*SparseArena.CorpusAgreesWithTwin/cuda_double' > "$w/memcheck.log" 2>&1; echo "memcheck rc $?"
grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/memcheck.log" | head -5
echo "t $(( $(date +%s) - s )) s"
timeout 80 $b/bench/gpuqr_sparse_gpu_bench --mode both --warmup 1 --repeat 2 --sides gpu,spqr --matrices .carry-matrices/Groebner_id2003_aug.mtx,.carry-matrices/Franz6_id1959_aug.mtx --gen grid3d:27 --json "$w/sparse_bench_small.jsonl" > "$w/sparse_bench_small.txt" 2>&1; echo "bench small rc $?"
grep -vE "^ *BLAS and|^intensity|^x_gpu" "$w/sparse_bench_small.txt" | tail -n 22
echo "t $(( $(date +%s) - s )) s"
timeout 200 $b/bench/gpuqr_sparse_gpu_bench --mode both --warmup 0 --repeat 1 --sides gpu,spqr --gen grid3d:38,grid3d:45 --json "$w/sparse_bench_large.jsonl" > "$w/sparse_bench_large.txt" 2>&1; echo "bench large rc $?"
grep -vE "^ *BLAS and|^intensity|^x_gpu" "$w/sparse_bench_large.txt" | tail -n 18
