#!/usr/bin/env bash
# Session 4: the AH panel's b x b work on the whole block (two barriers per column), the Gram
# pass double-buffered: twins, per-kernel times (ncu), the panels alone, geqrf A/B.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_panel_bench gpuqr_tester gpuqr_update_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 120 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*TsqrCudaTwins*:*Tsqr*cuda*:*Dense*cuda*:*Blocked*cuda*' > "$w/twins.log" 2>&1; echo "twins rc $?"
grep -E "^\[  FAILED|PASSED" "$w/twins.log" | head; grep -B3 -A10 "Failure" "$w/twins.log" | head -40
timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 20 --launch-count 4 $b/bench/gpuqr_panel_bench --h 512 --b 32 --precision d --repeat 5 2>&1 | grep -E "ah_|panel_single|gpu__time" | head -12
timeout 90 $b/bench/gpuqr_panel_bench --h 64,128,256,512,1024,4096,65536 --b 32 --precision d,s --repeat 20 > "$w/panel_bench.txt" 2>&1; echo "panel rc $?"; cat "$w/panel_bench.txt"
GPUQR_PANEL_AH=0 timeout 100 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/geqrf_ah0.txt" 2>&1
timeout 150 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/bench_checked.txt" 2>&1; echo "tester rc $?"
grep -E "geqrf" "$w/geqrf_ah0.txt" | head -8; grep -E "geqrf|orgqr|gels" "$w/bench_checked.txt" | head -20
timeout 60 $b/bench/gpuqr_update_bench --only add --quick --repeat 1 > "$w/add_quick.txt" 2>&1; echo "add rc $?"; grep -E "^add" "$w/add_quick.txt" | head -12
