#!/usr/bin/env bash
# Session 7, seventh call, after the last CUDA edit (larft's merge method chosen by V's height:
# batched GEMMs from 2048 rows, TRMMs below): the dense and update CUDA tests, the dense tester
# (1024-4096 and 8192), the row-removal bench with the new rotation kernel and the old path in
# the same run (GPUQR_REMOVE_ROTATIONS=0), and the sparse bench on grid3d:45 (Q-less, with
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
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_sparse_gpu_bench gpuqr_update_bench gpuqr_tester > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 100 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests_cuda.log" | head -20; grep -B3 -A10 "Failure" "$w/tests_cuda.log" | head -30
T=$b/bench/gpuqr_tester
timeout 60 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/tester.txt" 2>&1; echo "tester rc $?"
grep -vE "^#|^$" "$w/tester.txt" | tail -n 20
timeout 50 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 8192 --repeat 2 --warmup 1 --no-check > "$w/tester_8192.txt" 2>&1; echo "tester 8192 rc $?"
grep -vE "^#|^$" "$w/tester_8192.txt" | tail -n 8
echo "t $(( $(date +%s) - s )) s"
for v in 1 0; do
  GPUQR_REMOVE_ROTATIONS=$v timeout 80 $b/bench/gpuqr_update_bench --only remove --repeat 1 > "$w/update_remove_rot$v.txt" 2>&1; echo "== remove rows, GPUQR_REMOVE_ROTATIONS=$v rc $?"; grep -vE "^#|^$" "$w/update_remove_rot$v.txt" | tail -n 34
done
echo "t $(( $(date +%s) - s )) s"
timeout 120 $b/bench/gpuqr_sparse_gpu_bench --mode qless --warmup 0 --repeat 1 --sides gpu,spqr --gen grid3d:45 --json "$w/sparse_bench_large.jsonl" > "$w/sparse_bench_large.txt" 2>&1; echo "bench large rc $?"
grep -vE "^ *BLAS and|^intensity|^x_gpu" "$w/sparse_bench_large.txt" | tail -n 8
