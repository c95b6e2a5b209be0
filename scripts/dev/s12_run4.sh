#!/usr/bin/env bash
# Session 12, fourth call: the few-rows add kernel's larfg on one reciprocal square root and
# one reciprocal (no range checks on the chain), alpha read a column ahead, dot products
# without the zero partial sums for p < 4; d built with room for added rows (no allocation
# and wait in the first add_rows); the bench splits our time into update and solve.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; rm -rf "$w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_update_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 60 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins*' > "$w/tests_twins.log" 2>&1; echo "twins rc $?"
grep -E "^\[  FAILED|PASSED" "$w/tests_twins.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_twins.log" | head -60
timeout 80 $b/bench/gpuqr_update_bench --only add --pmax 16 --repeat 5 > "$w/update_small.txt" 2>&1; echo "bench rc $?"; cat "$w/update_small.txt"
echo "t $(( $(date +%s) - s )) s"
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$w/san_$tool.log" | head -3
done
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*QrUpdate*' > "$w/tests_update.log" 2>&1; echo "update tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests_update.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_update.log" | head -40
echo "t $(( $(date +%s) - s )) s"
timeout 200 $b/bench/gpuqr_update_bench --only add --pmax 2000 --repeat 3 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
echo "t $(( $(date +%s) - s )) s"
