#!/usr/bin/env bash
# Session 10, eighth call: the rows kernel's branch-free form with its out-of-line fallback,
# FP64 A/B (GPUQR_BATCHED_ROWS_FAST) at 1 GiB against cuBLAS in the same run, twice; the
# small-kernel tests (every layout; strided and listed special inputs, which take the
# fallback); memcheck and racecheck on the rows kernels.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
B=$b/bench/gpuqr_batched_bench
for F in 0 1 0 1; do
  GPUQR_BATCHED_ROWS_FAST=$F timeout 60 $B --n 16 --shape tall --precision both --gib 1 --no-variable > "$w/rows_fast$F.txt" 2>&1; echo "== rows fast $F rc $?"; grep -E "x16 " "$w/rows_fast$F.txt" | cut -c1-110
done
echo "t $(( $(date +%s) - s )) s"
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*BatchedSmallCuda*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -60
grep -E "first (tau|beta)" "$w/tests.log" | head -6
CS="compute-sanitizer --error-exitcode 9"
for t in "memcheck BatchedSmallCuda.SanitizerSizedRowsKernels/cuda_double" "racecheck BatchedSmallCuda.SanitizerSizedRowsKernels/cuda_double"; do
  set -- $t; f="$w/san_$1_$(echo $2 | tr '/.' '__').log"
  timeout 60 $CS --tool $1 $b/tests/gpuqr_tests --gtest_filter="*$2" > "$f" 2>&1; echo "== $1 $2 rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$f" | head -3
done
echo "t $(( $(date +%s) - s )) s"
