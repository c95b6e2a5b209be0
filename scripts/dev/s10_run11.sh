#!/usr/bin/env bash
# Session 10, eleventh call, after the rows kernel moved to its own file (same SASS sizes and registers) and the staged version was removed: the
# batched small and tall tests;
# 64 x 16 against cuBLAS once more.
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
timeout 60 $b/bench/gpuqr_batched_bench --n 16 --shape tall --precision both --gib 1 --no-variable > "$w/small.txt" 2>&1; echo "== rc $?"; grep -E "x16 " "$w/small.txt" | cut -c1-110
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*BatchedSmallCuda*:*BatchedTallSmallCuda*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -60
echo "t $(( $(date +%s) - s )) s"
