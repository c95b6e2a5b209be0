#!/usr/bin/env bash
# Session 11, fifth call, after removing the batched kernels' measured-slower variants (the
# small kernel's legacy kernel, the tall kernel's V0-V2): every
# batched and tile-engine CUDA test, memcheck and racecheck on the small, rows and tall
# kernels, the whole batched benchmark.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; rm -rf "$w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*Batched*cuda*:*Batched*Cuda*:*TileEngine*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -60
echo "t $(( $(date +%s) - s )) s"
CS="compute-sanitizer --error-exitcode 9"
for t in "memcheck BatchedSmallCuda.SanitizerSizedRowsKernels/cuda_double" "racecheck BatchedSmallCuda.SanitizerSizedRowsKernels/cuda_double" "memcheck BatchedSmallCuda.SanitizerSizedStridedBatches/cuda_double" "racecheck BatchedSmallCuda.SanitizerSizedStridedBatches/cuda_double" "memcheck BatchedTallSmallCuda.SanitizerSizedBatches/cuda_double" "racecheck BatchedTallSmallCuda.SanitizerSizedBatches/cuda_double" "racecheck BatchedTallSmallCuda.SanitizerSizedBatches/cuda_float"; do
  set -- $t; f="$w/san_$1_$(echo $2 | tr '/.' '__').log"
  timeout 60 $CS --tool $1 $b/tests/gpuqr_tests --gtest_filter="*$2" > "$f" 2>&1; echo "== $1 $2 rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$f" | head -3
done
echo "t $(( $(date +%s) - s )) s"
timeout 120 $b/bench/gpuqr_batched_bench --n 16,32,64,128,512 --shape both --precision both --gib 1 > "$w/batched.txt" 2>&1; echo "batched rc $?"; grep -vE "^$" "$w/batched.txt" | cut -c1-125
echo "t $(( $(date +%s) - s )) s"
