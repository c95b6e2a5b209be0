#!/usr/bin/env bash
# Session 5, third device call: larfb and larft without cuBLAS TRMM (A/B with
# GPUQR_LARFB_TRMM=1, same run), the Gram kernels' new default (FP32, n <= 64), the AH
# thresholds A/B at 2048, every CUDA test, sanitizers on the new kernels, the dense table
# (small and large), tall-skinny and row updates.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_tester gpuqr_tsqr_bench gpuqr_update_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
T="$b/bench/gpuqr_tester --backend cuda --baseline cusolver"
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:*GramKernels*:*TileEngine*' > "$w/tests.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -60
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests \
    --gtest_filter='*KernelTwins.Larft*:*KernelTwins.Larfb*:*KernelTwins.PanelQrAh*' > "$w/san_$tool.log" 2>&1
  echo "$tool rc $?"; grep -E "ERROR SUMMARY|FAILED|PASSED" "$w/san_$tool.log" | head -4
done
echo "t $(( $(date +%s) - s )) s"
for k in 0 1; do
  GPUQR_LARFB_TRMM=$k timeout 110 $T --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 --json "$w/bench_trmm$k.jsonl" > "$w/bench_trmm$k.txt" 2>&1; echo "== GPUQR_LARFB_TRMM=$k rc $?"
  grep -E "^geqrf|^orgqr|^gels" "$w/bench_trmm$k.txt" | awk '{print $1,$2,$5,$7,$10,$12,$13,$14,$15,$17}'
done
for r in 320 100000; do
  GPUQR_PANEL_AH_MIN_ROWS=$r timeout 40 $T --op geqrf --precision d,s --dim 1024,2048 --repeat 5 --warmup 2 --no-check > "$w/geqrf_ahmin$r.txt" 2>&1; echo "== AH min rows $r"; grep -E "^geqrf" "$w/geqrf_ahmin$r.txt" | awk '{print $1,$2,$5,$7,$10,$12}'
done
echo "t $(( $(date +%s) - s )) s"
timeout 170 $T --op geqrf,orgqr,gels --precision d --dim 8192,16384,8192x4096,16384x8192,65536x1024 --repeat 2 --warmup 1 --no-check --json "$w/bench_large.jsonl" > "$w/bench_large.txt" 2>&1; echo "large d rc $?"; grep -E "^geqrf|^orgqr|^gels" "$w/bench_large.txt" | awk '{print $1,$2,$3,$5,$7,$10,$12}'
timeout 60 $T --op geqrf,orgqr,gels --precision s --dim 8192,16384 --repeat 2 --warmup 1 --no-check --json "$w/bench_large_s.jsonl" > "$w/bench_large_s.txt" 2>&1; echo "large s rc $?"; grep -E "^geqrf|^orgqr|^gels" "$w/bench_large_s.txt" | awk '{print $1,$2,$3,$5,$7,$10,$12}'
echo "t $(( $(date +%s) - s )) s"
timeout 60 $b/bench/gpuqr_tsqr_bench --m 1048576 --n 16,32,64,128 --precision d,s --methods automatic --forms r,rb,explicit,geqrf --repeat 5 > "$w/tsqr.txt" 2>&1; echo "tsqr rc $?"; grep -vE "^#" "$w/tsqr.txt" | tail -n 34
timeout 50 $b/bench/gpuqr_update_bench --only add --quick --repeat 1 > "$w/add_quick.txt" 2>&1; echo "add rc $?"; grep -E "^add" "$w/add_quick.txt" | head -12
echo "t $(( $(date +%s) - s )) s"
