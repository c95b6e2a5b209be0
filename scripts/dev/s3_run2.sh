#!/usr/bin/env bash
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; b=build-gpu; s=$(date +%s)
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
cmake --build $b --parallel 16 > "$out/build.log" 2>&1 || { grep -E "error" -A5 "$out/build.log" | head -60; exit 1; }
echo "build $(( $(date +%s) - s )) s"
$b/bench/gpuqr_panel_bench --h 32,64,128,256,512,640,1024 --b 32,16 --repeat 30
for la in 1 0; do for single in 0 1; do
 echo "LOOKAHEAD=$la SINGLE=$single: $(GPUQR_LOOKAHEAD=$la GPUQR_PANEL_SINGLE=$single $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf --precision d --dim 1024 --repeat 5 --warmup 2 --no-check | grep -E '^geqrf' | awk '{print $7, $10, $12}')"
done; done
timeout 120 ncu --kernel-name regex:panel_single --launch-skip 3 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy $b/bench/gpuqr_panel_bench --h 512 --b 32 --precision d --repeat 3 > "$out/ncu.txt" 2>&1
grep -E "Duration|Stall|Warp Cycles|Registers|Block Limit|Achieved|Issued" "$out/ncu.txt" | head -40
timeout 100 ncu --kernel-name regex:panel_single --launch-skip 3 --launch-count 1 --set full --import-source no --page source --csv $b/bench/gpuqr_panel_bench --h 512 --b 32 --precision d --repeat 3 > "$out/ncu_source.csv" 2>&1
echo "total $(( $(date +%s) - s )) s"
