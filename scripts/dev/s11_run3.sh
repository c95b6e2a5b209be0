#!/usr/bin/env bash
# Session 11, third call (the kernels as committed): the rows kernel's defaults (no prefetch,
# FP64 branch-free form first) for 64 x 16 at 1 GiB against cuBLAS in the same run, three
# times, with the L2 prefetch and the FP64 general form once each for the A/B; every CUDA test;
# memcheck and racecheck on the rows kernels; the whole batched benchmark.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; rm -rf "$w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
B=$b/bench/gpuqr_batched_bench
i=0
for v in "GPUQR_NONE=0" "GPUQR_BATCHED_ROWS_PREFETCH=1" "GPUQR_NONE=0" "GPUQR_BATCHED_ROWS_FAST=0" "GPUQR_NONE=0"; do
  i=$((i + 1)); f="$w/rows_${i}_$(echo $v | tr '=' '_').txt"
  env "$v" timeout 60 $B --n 16 --shape tall --precision both --gib 1 --no-variable > "$f" 2>&1; echo "== $v rc $?"; grep -E "64x16 " "$f" | cut -c1-120
done
echo "t $(( $(date +%s) - s )) s"
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:GraphCache*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED" "$w/tests_cuda.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_cuda.log" | head -60
echo "t $(( $(date +%s) - s )) s"
CS="compute-sanitizer --error-exitcode 9"
for t in "memcheck SanitizerSizedRowsKernels/cuda_double" "racecheck SanitizerSizedRowsKernels/cuda_double" "memcheck SanitizerSizedRowsKernels/cuda_float" "racecheck SanitizerSizedRowsKernels/cuda_float"; do
  set -- $t; f="$w/san_$1_$(echo $2 | tr '/.' '__').log"
  timeout 100 $CS --tool $1 $b/tests/gpuqr_tests --gtest_filter="*BatchedSmallCuda.$2" > "$f" 2>&1; echo "== $1 $2 rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$f" | head -3
done
echo "t $(( $(date +%s) - s )) s"
timeout 150 $B --n 16,32,64,128,512 --shape both --precision both --gib 1 > "$w/batched.txt" 2>&1; echo "batched rc $?"; grep -vE "^$" "$w/batched.txt" | cut -c1-125
echo "t $(( $(date +%s) - s )) s"
