#!/usr/bin/env bash
# Session 10, seventh call, after the last CUDA edit: every CUDA test (graph replay's
# included); the batched table at 1 GiB against cuBLAS (the issue's benchmark); geqrf at 8192
# with and without graphs beside cuSOLVER.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench gpuqr_tester > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:GraphCache*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED" "$w/tests_cuda.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_cuda.log" | head -60
echo "t $(( $(date +%s) - s )) s"
timeout 150 $b/bench/gpuqr_batched_bench --n 16,32,64,128,512 --shape both --precision both --gib 1 > "$w/batched.txt" 2>&1; echo "batched rc $?"; grep -vE "^$" "$w/batched.txt" | cut -c1-125
echo "t $(( $(date +%s) - s )) s"
timeout 90 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 8192 --repeat 3 --warmup 3 --graph both --no-check > "$w/graph_geqrf_8192.txt" 2>&1; echo "tester 8192 rc $?"; cut -c1-170 "$w/graph_geqrf_8192.txt" | grep -E "^geqrf|passed"
echo "t $(( $(date +%s) - s )) s"
