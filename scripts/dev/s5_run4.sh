#!/usr/bin/env bash
# Session 5, last device call: the TRMM-free larft merges and larfb A/B'd separately
# (GPUQR_LARFT_TRMM, GPUQR_LARFB_TRMM), batched least squares through the tile engine
# (lstsq_vbatched) against the existing route and cuBLAS gelsBatched, every CUDA test,
# memcheck on the new batched route and racecheck on the larft/larfb kernels.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_tester gpuqr_tile_engine_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
T="$b/bench/gpuqr_tester --backend cuda --baseline cusolver"
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:*GramKernels*:*TileEngine*:*Batched*' > "$w/tests.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -60
timeout 80 compute-sanitizer --tool memcheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*Lstsq*:*TileEngine*' > "$w/san_memcheck.log" 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY|FAILED|PASSED" "$w/san_memcheck.log" | head -4
timeout 80 compute-sanitizer --tool racecheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins.Larft*' > "$w/san_racecheck.log" 2>&1; echo "racecheck rc $?"; grep -E "ERROR SUMMARY|FAILED|PASSED" "$w/san_racecheck.log" | head -4
echo "t $(( $(date +%s) - s )) s"
for mk in "0 0" "1 0" "0 1" "1 1"; do
  set -- $mk
  GPUQR_LARFT_TRMM=$1 GPUQR_LARFB_TRMM=$2 timeout 60 $T --op geqrf,orgqr,gels --precision d,s --dim 1024,4096 --repeat 5 --warmup 2 --no-check > "$w/ab_merge$1_larfb$2.txt" 2>&1; echo "== LARFT_TRMM=$1 LARFB_TRMM=$2"
  grep -E "^geqrf|^orgqr|^gels" "$w/ab_merge$1_larfb$2.txt" | awk '{print $1,$2,$5,$7,$10,$12}' | paste -sd' ' | sed 's/ \(geqrf\|orgqr\|gels\) / | \1 /g'
done
echo "t $(( $(date +%s) - s )) s"
timeout 150 $b/bench/gpuqr_tile_engine_bench --lstsq --n 64,128,256,512 --gib 0.5 --repeat 3 > "$w/lstsq_bench.txt" 2>&1; echo "lstsq bench rc $?"; tail -n 22 "$w/lstsq_bench.txt"
echo "t $(( $(date +%s) - s )) s"
