#!/usr/bin/env bash
# Session 4, after the last CUDA edit: the AH panel's b x b work with 4 warps of 8 rows and
# branch-free updates (A/B against 8 warps, GPUQR_AH_THREADS=256, same run). Every CUDA test,
# sanitizers on the AH kernels, the panels alone, the dense table (AH on and off), adding rows
# and columns. One tarball.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_panel_bench gpuqr_tester gpuqr_update_bench gpuqr_update_columns_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*' > "$w/tests.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head; grep -B3 -A10 "Failure" "$w/tests.log" | head -40
GPUQR_AH_THREADS=256 timeout 100 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins.PanelQrAh*:*Blocked*cuda*' > "$w/tests256.log" 2>&1; echo "256 tests rc $?"
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests \
    --gtest_filter='*KernelTwins.PanelQrAh*:*AhPanelMatchesCpu*' > "$w/san_$tool.log" 2>&1
  echo "$tool rc $?"; tail -2 "$w/san_$tool.log"
done
echo "t $(( $(date +%s) - s )) s"
timeout 60 $b/bench/gpuqr_panel_bench --h 64,256,384,512,640,1024,4096,65536 --b 32 --precision d,s --repeat 20 > "$w/panel_bench.txt" 2>&1; echo "panel rc $?"; cat "$w/panel_bench.txt"
GPUQR_AH_THREADS=256 timeout 60 $b/bench/gpuqr_panel_bench --h 64,512,1024 --b 32 --precision d,s --repeat 20 > "$w/panel_bench_256.txt" 2>&1; echo "panel256 rc $?"; cat "$w/panel_bench_256.txt"
GPUQR_PANEL_AH=0 timeout 100 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/geqrf_ah0.txt" 2>&1
timeout 150 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 --json "$w/bench_checked.jsonl" > "$w/bench_checked.txt" 2>&1; echo "tester rc $?"
grep -E "geqrf|orgqr|gels" "$w/bench_checked.txt" | awk '{print $1,$2,$3,$5,$7,$10,$12,$13,$17}' | head -20
echo "t $(( $(date +%s) - s )) s"
timeout 150 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 8192,16384,8192x4096,16384x8192,65536x1024 --repeat 2 --warmup 1 --no-check --json "$w/bench_large.jsonl" > "$w/bench_large.txt" 2>&1; echo "large rc $?"; grep -E "geqrf" "$w/bench_large.txt" | awk '{print $1,$2,$3,$5,$7,$10,$12,$13}'
echo "t $(( $(date +%s) - s )) s"
timeout 60 $b/bench/gpuqr_update_bench --only add --quick --repeat 1 > "$w/add_quick.txt" 2>&1; echo "add rc $?"; grep -E "^add" "$w/add_quick.txt" | awk '{print $2,$3,$4,$5,$6,$7,$8}'
timeout 60 $b/bench/gpuqr_update_columns_bench --only add-end --repeat 2 > "$w/add_end.txt" 2>&1; echo "add-end rc $?"; tail -n +3 "$w/add_end.txt" | awk '{print $1,$2,$3,$4,$5,$6,$7,$9,$11}'
