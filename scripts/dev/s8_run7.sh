#!/usr/bin/env bash
# Session 8, seventh call: the FP32 Gram kernels on the TF32 tensor cores with the 3xTF32 split
# (helper, s8-tf32) against the FMA kernels (GPUQR_GRAM_TF32=0) and cuSOLVER in the same run;
# the small batched kernel with two lanes per column for n <= 16, m <= 32
# (GPUQR_BATCHED_SMALL_SPLIT=1) against one; tests of both, add_rows_small's twin test.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench gpuqr_tsqr_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 120 $b/tests/gpuqr_tests --gtest_filter='*GramTf32*:*GramKernels*:*TsqrMethods*:*Tall*:*QrUpdateCudaTwins*:*BatchedSmall*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
GPUQR_BATCHED_SMALL_SPLIT=1 timeout 60 $b/tests/gpuqr_tests --gtest_filter='*BatchedSmall*:*Batched.*' > "$w/tests_split.log" 2>&1; echo "split tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests_split.log" | head -10; grep -B3 -A12 "Failure" "$w/tests_split.log" | head -20
timeout 60 compute-sanitizer --tool memcheck $b/tests/gpuqr_tests --gtest_filter='*GramTf32.ExactOnSmallIntegers*' > "$w/memcheck_tf32.log" 2>&1; echo "memcheck tf32 rc $?"
grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/memcheck_tf32.log" | head -3
echo "t $(( $(date +%s) - s )) s"
B=$b/bench/gpuqr_batched_bench
for v in 0 1; do
  GPUQR_BATCHED_SMALL_SPLIT=$v timeout 40 $B --n 16,32 --shape both --precision both --gib 0.5 --no-variable > "$w/batched_split$v.txt" 2>&1; echo "== split $v rc $?"; grep -vE "^$|^#" "$w/batched_split$v.txt" | tail -n 9
done
echo "t $(( $(date +%s) - s )) s"
TS=$b/bench/gpuqr_tsqr_bench
for v in 0 1; do
  GPUQR_GRAM_TF32=$v timeout 100 $TS --m 1048576,4194304 --n 16,32,64,128 --precision s --methods automatic --forms r,rb,explicit,geqrf --repeat 5 > "$w/tsqr_s_tf32_$v.txt" 2>&1; echo "== tf32 $v rc $?"; grep -vE "^#|^$" "$w/tsqr_s_tf32_$v.txt" | grep -vE "GPUQR|device|copy band" | head -36
done
