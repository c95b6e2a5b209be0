#!/usr/bin/env bash
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; b=build-gpu; s=$(date +%s)
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
cmake --build $b --parallel 16 > "$out/build.log" 2>&1 || { grep -E "error" -A5 "$out/build.log" | head -60; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter="*KernelTwins.PanelQrSingle*" > "$out/memcheck.log" 2>&1; echo "memcheck rc $?"; tail -2 "$out/memcheck.log"
timeout 100 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*cuda*Blocked*:*cuda*Dense*' > "$out/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$out/tests.log" | head; grep -B2 -A10 "Failure" "$out/tests.log" | head -40
$b/bench/gpuqr_panel_bench --h 32,64,128,256,512,640,1024 --b 32 --repeat 30
for single in 0 1; do
 echo "SINGLE=$single:"; GPUQR_PANEL_SINGLE=$single $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048 --repeat 5 --warmup 2 --no-check | grep -E '^geqrf' | awk '{print $2, $5, $7, $10, $12}'
done
GPUQR_PANEL_SINGLE=0 timeout 60 $b/bench/gpuqr_update_bench --only add --repeat 2 --quick 2>&1 | tail -3
timeout 60 $b/bench/gpuqr_update_bench --only add --repeat 2 --quick 2>&1 | tail -3
timeout 60 ncu --kernel-name regex:panel_single --launch-skip 3 --launch-count 1 --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__average_warp_latency_per_inst_issued.ratio $b/bench/gpuqr_panel_bench --h 512 --b 32 --precision d --repeat 3 2>&1 | grep -E "duration|inst_executed|latency"
echo "total $(( $(date +%s) - s )) s"
