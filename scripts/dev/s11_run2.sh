#!/usr/bin/env bash
# Session 11, second call: the rows kernel (64 x 16) with no prefetch of the next matrix (the
# new default) under the new straight-line general steps, against session 10's form
# (GPUQR_BATCHED_ROWS_LEGACY=1), the branch-free FP64 form, the shared-memory slot and the L2
# prefetch, 1 GiB against cuBLAS in the same run, each twice; every batched CUDA test;
# memcheck and racecheck on the rows kernels; the whole batched benchmark.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
B=$b/bench/gpuqr_batched_bench
for i in 1 2; do
  for v in "1 0 0" "1 1 0" "1 0 1" "2 0 0" "0 0 0"; do
    set -- $v
    GPUQR_BATCHED_ROWS_STAGE=$1 GPUQR_BATCHED_ROWS_LEGACY=$2 GPUQR_BATCHED_ROWS_FAST=$3 timeout 60 $B --n 16 --shape tall --precision both --gib 1 --no-variable > "$w/rows_s$1_l$2_f$3_$i.txt" 2>&1; echo "== stage $1 legacy $2 fast $3 rc $?"; grep -E "64x16 " "$w/rows_s$1_l$2_f$3_$i.txt" | cut -c1-120
  done
done
echo "t $(( $(date +%s) - s )) s"
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*Batched*cuda*:*Batched*Cuda*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -60
echo "t $(( $(date +%s) - s )) s"
CS="compute-sanitizer --error-exitcode 9"
for t in "memcheck SanitizerSizedRowsKernels/cuda_double" "racecheck SanitizerSizedRowsKernels/cuda_double" "memcheck SanitizerSizedRowsKernels/cuda_float" "racecheck SanitizerSizedRowsKernels/cuda_float"; do
  set -- $t; f="$w/san_$1_$(echo $2 | tr '/.' '__').log"
  timeout 100 $CS --tool $1 $b/tests/gpuqr_tests --gtest_filter="*BatchedSmallCuda.$2" > "$f" 2>&1; echo "== $1 $2 rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$f" | head -3
done
echo "t $(( $(date +%s) - s )) s"
timeout 150 $B --n 16,32,64,128,512 --shape both --precision both --gib 1 > "$w/batched.txt" 2>&1; echo "batched rc $?"; grep -vE "^$" "$w/batched.txt" | cut -c1-125
echo "t $(( $(date +%s) - s )) s"
