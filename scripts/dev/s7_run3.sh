#!/usr/bin/env bash
# Session 7, third call: the FP64 Gram kernels on the tensor cores (issue 4) and the sparse
# dense-front lanes (issue 9): GPU tests of both, compute-sanitizer on the Gram kernels, the
# tall-skinny bench with GPUQR_GRAM_KERNEL=0 (cuBLAS) / 1 (ours) and the mma shapes, and the
# sparse bench on the two largest grids (GPU and SuiteSparseQR, same run).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_sparse_gpu_bench gpuqr_tsqr_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
t=$b/tests/gpuqr_tests
timeout 120 $t --gtest_filter='*GramKernels*:*Sparse*' > "$w/tests_gram_sparse.log" 2>&1; echo "gram+sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests_gram_sparse.log" | head -20; grep -B3 -A10 "Failure" "$w/tests_gram_sparse.log" | head -30
timeout 90 $t --gtest_filter='*Tsqr*cuda*:*Chol*cuda*:*TallSkinny*cuda*:*QrfAh*cuda*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests_tsqr.log" | head -10; grep -B3 -A10 "Failure" "$w/tests_tsqr.log" | head -20
echo "t $(( $(date +%s) - s )) s"
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $t --gtest_filter='Cuda/GramKernels.RandomAndGradedWithinRoundingBounds/cuda_double' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -3
done
echo "t $(( $(date +%s) - s )) s"
for k in 0 1; do
  GPUQR_GRAM_KERNEL=$k timeout 60 $b/bench/gpuqr_tsqr_bench --m 1048576 --n 16,32,64,128 --precision d --methods automatic --forms r,rb,explicit,geqrf --repeat 5 > "$w/tsqr_gram$k.txt" 2>&1; echo "== GPUQR_GRAM_KERNEL=$k rc $?"; grep -vE "^#|^$" "$w/tsqr_gram$k.txt" | head -24
done
for sh in 884 1684 1688; do
  GPUQR_GRAM_KERNEL=1 GPUQR_GRAM_DMMA=$sh timeout 40 $b/bench/gpuqr_tsqr_bench --m 1048576 --n 16,32,64,128 --precision d --methods automatic --forms rb --repeat 5 > "$w/tsqr_shape$sh.txt" 2>&1; echo "== shape $sh rc $?"; grep -vE "^#|^$" "$w/tsqr_shape$sh.txt" | head -8
done
echo "t $(( $(date +%s) - s )) s"
GPUQR_SPARSE_LANES=1 timeout 40 $b/bench/gpuqr_sparse_gpu_bench --mode qless --warmup 0 --repeat 1 --sides gpu --gen grid3d:38,grid3d:45 > "$w/sparse_lanes1.txt" 2>&1; echo "lanes=1 rc $?"
grep -E "^grid3d|gpu parts|gpu enqueue" "$w/sparse_lanes1.txt"
timeout 150 $b/bench/gpuqr_sparse_gpu_bench --mode qless --warmup 0 --repeat 1 --sides gpu,spqr --gen grid3d:38,grid3d:45 --json "$w/sparse_bench_large.jsonl" > "$w/sparse_bench_large.txt" 2>&1; echo "bench large rc $?"
grep -vE "^ *BLAS and|^intensity|^x_gpu" "$w/sparse_bench_large.txt" | tail -n 10
