#!/usr/bin/env bash
# Session 5, second device call: the QRF-AH amplification test (AH panel and QRF-AH method),
# the tile engine's GPU task kernel (issue 8) against its CPU twin and cublas geqrfBatched,
# the streamed Gram kernels for CholeskyQR2 (issue 4) A/B against cuBLAS; every CUDA test,
# sanitizers on the new kernels, the dense table.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_tester gpuqr_tsqr_bench gpuqr_tile_engine_bench gpuqr_update_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 300 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:*GramKernels*:*TileEngine*' > "$w/tests.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -30; grep -B3 -A12 "Failure" "$w/tests.log" | head -80
GPUQR_GRAM_KERNEL=1 timeout 120 $b/tests/gpuqr_tests --gtest_filter='*Tsqr*cuda*:*Chol*cuda*:*TallSkinny*cuda*:*QrfAh*cuda*:*QrUpdate*cuda*' > "$w/tests_gram1.log" 2>&1; echo "gram-forced tests rc $?"; grep -E "^\[  FAILED|PASSED" "$w/tests_gram1.log" | head
echo "t $(( $(date +%s) - s )) s"
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests \
    --gtest_filter='*TileEngine*MatchesTheTwin*:*GramKernels.Random*:*KernelTwins.PanelQrAh*' > "$w/san_$tool.log" 2>&1
  echo "$tool rc $?"; grep -E "ERROR SUMMARY|FAILED" "$w/san_$tool.log" | head -5
done
echo "t $(( $(date +%s) - s )) s"
for k in 0 1; do
  GPUQR_GRAM_KERNEL=$k timeout 120 $b/bench/gpuqr_tsqr_bench --m 1048576 --n 16,32,64,128 --precision d,s --methods automatic --forms r,rb,explicit,geqrf --repeat 5 > "$w/tsqr_gram$k.txt" 2>&1; echo "== tsqr GPUQR_GRAM_KERNEL=$k rc $?"; grep -vE "^#" "$w/tsqr_gram$k.txt" | tail -n 34
done
echo "t $(( $(date +%s) - s )) s"
timeout 150 $b/bench/gpuqr_tile_engine_bench --n 64,128,256,512 --gib 0.5 --repeat 3 > "$w/tile_bench.txt" 2>&1; echo "tile bench rc $?"; tail -n 20 "$w/tile_bench.txt"
echo "t $(( $(date +%s) - s )) s"
timeout 150 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 --json "$w/bench_checked.jsonl" > "$w/bench_checked.txt" 2>&1; echo "tester rc $?"
grep -E "geqrf|orgqr|gels" "$w/bench_checked.txt" | awk '{print $1,$2,$3,$5,$7,$10,$12,$13,$14,$15,$17}' | head -20
echo "t $(( $(date +%s) - s )) s"
