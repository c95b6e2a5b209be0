#!/usr/bin/env bash
# Session 4, second device call: the single-block panel kernel without divergent per-column
# branches (issue 3), the deletion-rotation ring without 64-bit remainders (issue 5), the tall
# inner QR threshold (issue 6). Tests, sanitizers, then the benchmarks; logs in one tarball.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_update_bench gpuqr_update_columns_bench gpuqr_panel_bench gpuqr_tester > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*' > "$w/tests.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head; grep -B2 -A8 "Failure" "$w/tests.log" | head -30
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests \
    --gtest_filter='*KernelTwins.PanelQrSingleBlockScales*:*DeletionRotationsMatch*' > "$w/san_$tool.log" 2>&1
  echo "$tool rc $?"; tail -2 "$w/san_$tool.log"
done
echo "t $(( $(date +%s) - s )) s"
timeout 60 $b/bench/gpuqr_panel_bench --h 32,64,128,256,512,640,1024 --b 32 --precision d,s --repeat 30 > "$w/panel_bench.txt" 2>&1; echo "panel rc $?"; cat "$w/panel_bench.txt"
GPUQR_PANEL_SINGLE=0 timeout 100 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/geqrf_single0.txt" 2>&1
timeout 150 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 --json "$w/bench_checked.jsonl" > "$w/bench_checked.txt" 2>&1; echo "tester rc $?"
grep -E "geqrf" "$w/geqrf_single0.txt" | head -8; grep -E "geqrf|orgqr|gels" "$w/bench_checked.txt" | head -20
echo "t $(( $(date +%s) - s )) s"
timeout 120 $b/bench/gpuqr_update_bench --only remove --repeat 1 > "$w/remove.txt" 2>&1
echo "remove rc $?"; grep -E "^remove" "$w/remove.txt" | awk '{print $2,$3,$4,$5,$6,$7,$8,$9,$10}'
echo "t $(( $(date +%s) - s )) s"
timeout 90 $b/bench/gpuqr_update_columns_bench --only add-end --repeat 2 > "$w/add_end.txt" 2>&1; echo "add-end rc $?"; tail -n +3 "$w/add_end.txt" | awk '{print $1,$2,$3,$4,$5,$6,$7,$9,$11,$13}'
echo "t $(( $(date +%s) - s )) s"
timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum --csv $b/bench/gpuqr_tester --backend cuda --op geqrf --precision d --dim 1024 --repeat 1 --warmup 0 --no-check > "$w/ncu_geqrf1024.csv" 2>&1; echo "ncu rc $?"
