#!/usr/bin/env bash
# Session 3, device run 1: build, CUDA tests, sanitizer on the new panel kernel, A/B benchmark.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"
b=build-gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
s=$(date +%s)
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
cmake --build $b --parallel 16 > "$out/build.log" 2>&1 || { grep -E "error" -A5 "$out/build.log" | head -60; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*' > "$out/gpu_tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|Failure|PASSED|tests ran" "$out/gpu_tests.log" | head -30
grep -B3 -A12 "Failure" "$out/gpu_tests.log" | head -80
echo "tests $(( $(date +%s) - s )) s"
t=$b/bench/gpuqr_tester
for single in 0 1; do
  echo "== GPUQR_PANEL_SINGLE=$single"
  GPUQR_PANEL_SINGLE=$single timeout 120 $t --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s \
    --dim 1024,2048,4096 --repeat 5 --warmup 2 --json "$out/bench_single$single.jsonl" 2>&1 | tee "$out/bench_single$single.txt" | grep -E "^(geqrf|orgqr|gels)" | awk '{print $1,$2,$5,$7,$10,$11}'
done
echo "bench $(( $(date +%s) - s )) s"
GPUQR_PANEL_SINGLE=0 timeout 90 $b/bench/gpuqr_update_bench --only add --repeat 2 --quick > "$out/upd_single0.txt" 2>&1
timeout 90 $b/bench/gpuqr_update_bench --only add --repeat 2 --quick > "$out/upd_single1.txt" 2>&1
tail -8 "$out/upd_single0.txt"; tail -8 "$out/upd_single1.txt"
echo "upd $(( $(date +%s) - s )) s"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins.PanelQrSingle*' > "$out/memcheck.log" 2>&1; echo "memcheck rc $?"; tail -3 "$out/memcheck.log"
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins.PanelQrSingle*' > "$out/racecheck.log" 2>&1; echo "racecheck rc $?"; tail -3 "$out/racecheck.log"
echo "total $(( $(date +%s) - s )) s"
