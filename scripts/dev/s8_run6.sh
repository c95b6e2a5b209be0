#!/usr/bin/env bash
# Session 8, sixth call: the new register kernel of the batched QR (helper, s8-small:
# persistent warps, double-buffered cp.async loads, parallel larfg) with the blocked route,
# and add_rows_small's cheaper larfg. Tests, memcheck and racecheck on both batched kernels,
# the batched bench (both precisions, both shapes, variable sizes) against cublas<t>geqrfBatched
# in the same run with the old small kernel as A/B, adding rows against the refactor.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench gpuqr_update_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 100 $b/tests/gpuqr_tests --gtest_filter='*Batched*:*QrUpdate*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $b/tests/gpuqr_tests --gtest_filter='*BatchedSmallCuda.SanitizerSized*/cuda_double' > "$w/${tool}_small.log" 2>&1; echo "$tool small rc $?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/${tool}_small.log" | head -4
done
timeout 60 compute-sanitizer --tool racecheck $b/tests/gpuqr_tests --gtest_filter='*BatchedBlocked*StridedAndPointer*/cuda_double' > "$w/racecheck_blocked.log" 2>&1; echo "racecheck blocked rc $?"
grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$w/racecheck_blocked.log" | head -3
echo "t $(( $(date +%s) - s )) s"
B=$b/bench/gpuqr_batched_bench
GPUQR_BATCHED_SMALL=0 timeout 40 $B --n 16,32 --shape both --precision both --gib 0.5 --no-variable --no-baseline > "$w/batched_small_old.txt" 2>&1; echo "old small rc $?"; grep -vE "^$|^#" "$w/batched_small_old.txt" | tail -n 9
timeout 150 $B --n 16,32,64,128,256,512 --shape both --precision both --gib 0.5 > "$w/batched.txt" 2>&1; echo "batched rc $?"; grep -vE "^$" "$w/batched.txt" | tail -n 34
echo "t $(( $(date +%s) - s )) s"
timeout 100 $b/bench/gpuqr_update_bench --only add --repeat 1 > "$w/update_add.txt" 2>&1; echo "add rows rc $?"; grep -vE "^#|^$" "$w/update_add.txt" | tail -n 30
