#!/usr/bin/env bash
# Session 7, tenth call: kept-mode bounce buffers only where all fronts hold 1 GB or more. The
# sparse tests, and the kept-mode bench on the small problems and grid3d:38 (GPU and
# SuiteSparseQR in the same run).
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
timeout 100 $b/tests/gpuqr_tests --gtest_filter='*Sparse*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -30
timeout 80 $b/bench/gpuqr_sparse_gpu_bench --mode kept --warmup 1 --repeat 2 --sides gpu,spqr --matrices .carry-matrices/Groebner_id2003_aug.mtx,.carry-matrices/Franz6_id1959_aug.mtx --gen grid3d:27,grid3d:38 --json "$w/sparse_bench_kept.jsonl" > "$w/sparse_bench_kept.txt" 2>&1; echo "bench kept rc $?"
grep -vE "^ *BLAS and|^intensity|^x_gpu|gpu enqueue" "$w/sparse_bench_kept.txt" | tail -n 14
