#!/usr/bin/env bash
# Session 9, first call: the small batched kernel's larfg scalars inline (refined rsqrt and
# reciprocal): the batched CUDA tests (the new first-reflector ulp test among them), then
# gpuqr_batched_bench for n = 16, 32, 64 (square and 4:1 tall) and the variable-size batch,
# FP64 and FP32, 1 GiB per batch as issue 8 asks, against cublas<t>geqrfBatched in the same run.
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
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Batched*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
grep -E "first (tau|beta)" "$w/tests.log" | head -4
echo "t $(( $(date +%s) - s )) s"
timeout 150 $b/bench/gpuqr_batched_bench --n 16,32,64 --shape both --precision both --gib 1 > "$w/batched.txt" 2>&1; echo "batched rc $?"; grep -E "^fp|^#|var" "$w/batched.txt"
echo "t $(( $(date +%s) - s )) s"
