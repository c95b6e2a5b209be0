#!/usr/bin/env bash
# Session 11, fourth call: compute-sanitizer memcheck and racecheck on the tile engine's task
# kernel (a new sanitizer-sized test) and on the batched API tests (every route of geqrf,
# ormqr, orgqr, least squares: small, rows, tall, blocked, block, dense), FP64.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; rm -rf "$w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 60 $b/tests/gpuqr_tests --gtest_filter='*TileEngine*' > "$w/tests_tile.log" 2>&1; echo "tile tests rc $?"; grep -E "^\[  FAILED|PASSED" "$w/tests_tile.log"
CS="compute-sanitizer --error-exitcode 9"
for t in "memcheck *TileEngineCuda.SanitizerSizedRuns/cuda_double" "racecheck *TileEngineCuda.SanitizerSizedRuns/cuda_double" "memcheck Backends/Batched.*/cuda_double" "racecheck Backends/Batched.*/cuda_double"; do
  set -- $t; f="$w/san_$1_$(echo $2 | tr '/.*' '___').log"
  timeout 170 $CS --tool $1 $b/tests/gpuqr_tests --gtest_filter="$2" > "$f" 2>&1; echo "== $1 $2 rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|tests ran" "$f" | head -4
  echo "t $(( $(date +%s) - s )) s"
done
