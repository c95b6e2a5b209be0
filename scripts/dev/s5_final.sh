#!/usr/bin/env bash
# Session 5, the check after the last CUDA edit (defaults chosen from s5_run4.sh: larft's
# merges by TRMM, larfb by GEMM; the tile engine's least-squares route for n >= 256 square-ish
# and 128 <= n < 256 tall): every CUDA test, the dense table, batched least squares.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_tester gpuqr_tile_engine_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:*GramKernels*:*TileEngine*:*Batched*' > "$w/tests.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -60
timeout 90 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 --json "$w/bench_checked.jsonl" > "$w/bench_checked.txt" 2>&1; echo "tester rc $?"
grep -E "^geqrf|^orgqr|^gels" "$w/bench_checked.txt" | awk '{print $1,$2,$5,$7,$10,$12,$13,$14,$15,$17}'
timeout 100 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op orgqr,gels --precision d,s --dim 8192 --repeat 2 --warmup 1 --no-check > "$w/bench_8192.txt" 2>&1; echo "8192 rc $?"; grep -E "^orgqr|^gels" "$w/bench_8192.txt" | awk '{print $1,$2,$5,$7,$10,$12}'
timeout 100 $b/bench/gpuqr_tile_engine_bench --lstsq --n 128,256,512 --gib 0.5 --repeat 3 > "$w/lstsq_bench.txt" 2>&1; echo "lstsq bench rc $?"; tail -n 14 "$w/lstsq_bench.txt"
echo "t $(( $(date +%s) - s )) s"
