#!/usr/bin/env bash
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; b=build-gpu; s=$(date +%s)
cmake --build $b --parallel 16 > "$out/build.log" 2>&1 || { grep -E "error" -A5 "$out/build.log" | head -60; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:SparseSchedule.*:SparseQRStaging.*' > "$out/gpu_tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]|tests ran" "$out/gpu_tests.log" | head -20
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins.PanelQrSingle*:*KernelTwins.PanelQrScales*' > "$out/memcheck.log" 2>&1; echo "memcheck rc $?"; tail -2 "$out/memcheck.log"
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins.PanelQrSingleBlockScales*' > "$out/racecheck.log" 2>&1; echo "racecheck rc $?"; tail -2 "$out/racecheck.log"
echo "t $(( $(date +%s) - s )) s"
$b/bench/gpuqr_panel_bench --h 32,64,128,256,512,640,1024 --b 32 --repeat 30 | tee "$out/panel_bench.txt"
for single in 0 1; do
  GPUQR_PANEL_SINGLE=$single timeout 60 $b/bench/gpuqr_update_bench --only add --repeat 2 --quick > "$out/update_add_single$single.txt" 2>&1
  echo "single=$single"; tail -2 "$out/update_add_single$single.txt"
done
echo "total $(( $(date +%s) - s )) s"
