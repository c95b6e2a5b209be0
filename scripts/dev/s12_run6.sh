#!/usr/bin/env bash
# Session 12, sixth call (the last CUDA edit): the few-rows add kernel broadcasts lane j's
# entries by shuffles again for p <= 4 (run 4 was faster there), through shared memory for
# p > 4 (run 5). Its twin and update tests, the update bench (p <= 16), memcheck, racecheck.
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
timeout 40 $b/tests/gpuqr_tests --gtest_filter='*TrsmFewRhs*:*QrUpdateCudaTwins*' > "$w/tests_twins.log" 2>&1; echo "twins rc $?"
grep -E "^\[  FAILED|PASSED" "$w/tests_twins.log" | head; grep -B3 -A12 "Failure" "$w/tests_twins.log" | head -50
timeout 50 $b/bench/gpuqr_update_bench --only add --pmax 16 --repeat 5 > "$w/update_small.txt" 2>&1; echo "bench rc $?"; cat "$w/update_small.txt"
echo "t $(( $(date +%s) - s )) s"
timeout 60 $b/tests/gpuqr_tests --gtest_filter='*QrUpdate*' > "$w/tests_update.log" 2>&1; echo "update tests rc $?"
grep -E "^\[  FAILED|PASSED" "$w/tests_update.log" | head; grep -B3 -A12 "Failure" "$w/tests_update.log" | head -30
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$w/san_$tool.log" | head -3
done
echo "t $(( $(date +%s) - s )) s"
