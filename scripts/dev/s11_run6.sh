#!/usr/bin/env bash
# Session 11, sixth call: geqrf_wy (Kerr's blocked QR with the full Q in W/Y form; host
# driver on the existing CUDA leaves) on the device: its tests and the dense ones, then
# gpuqr_wy_bench against cuSOLVER geqrf + orgqr in the same run.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; rm -rf "$w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_wy_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 100 $b/tests/gpuqr_tests --gtest_filter='*DenseWy*:Backends/Dense.*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED|wy " "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
echo "t $(( $(date +%s) - s )) s"
timeout 90 $b/bench/gpuqr_wy_bench --n 1024,2048,4096 --precision both --repeat 3 > "$w/wy_bench.txt" 2>&1; echo "wy bench rc $?"; cat "$w/wy_bench.txt"
echo "t $(( $(date +%s) - s )) s"
