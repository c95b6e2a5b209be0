#!/usr/bin/env bash
# Session 7, second call: the faster analysis (merged) and R's arrays left uninitialized until
# written: the sparse tests, then a sweep of the dense-front knobs on grid3d:38/45 (GPU side
# only: GPUQR_SPARSE_BLOCK staircase block width, GPUQR_SPARSE_WHOLE percent for one geqrf
# per front, GPUQR_SPARSE_DENSE_MIN batched/blocked split), then the bench with SuiteSparseQR.
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
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED \]" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -40
echo "t $(( $(date +%s) - s )) s"
sweep() {  # label, env assignments...
  local label=$1; shift
  env "$@" timeout 60 $b/bench/gpuqr_sparse_gpu_bench --mode qless --warmup 0 --repeat 1 --sides gpu --gen grid3d:38,grid3d:45 > "$w/sweep_$label.txt" 2>&1
  echo "== $label ($*)"; grep -E "^grid3d|gpu parts|gpu enqueue" "$w/sweep_$label.txt" | sed -E 's/ +qless +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.e+]+ +[0-9.]+ +/ /'
}
sweep default
sweep block512 GPUQR_SPARSE_BLOCK=512
sweep block1024 GPUQR_SPARSE_BLOCK=1024
sweep whole0 GPUQR_SPARSE_WHOLE=0
sweep min1024 GPUQR_SPARSE_DENSE_MIN=1024
sweep min2048 GPUQR_SPARSE_DENSE_MIN=2048
sweep min1024_whole0 GPUQR_SPARSE_DENSE_MIN=1024 GPUQR_SPARSE_WHOLE=0
sweep min1024_block1024 GPUQR_SPARSE_DENSE_MIN=1024 GPUQR_SPARSE_BLOCK=1024
echo "t $(( $(date +%s) - s )) s"
timeout 150 $b/bench/gpuqr_sparse_gpu_bench --mode qless --warmup 0 --repeat 1 --sides gpu,spqr --gen grid3d:38,grid3d:45 --json "$w/sparse_bench_large.jsonl" > "$w/sparse_bench_large.txt" 2>&1; echo "bench large rc $?"
grep -vE "^ *BLAS and|^intensity|^x_gpu" "$w/sparse_bench_large.txt" | tail -n 10
