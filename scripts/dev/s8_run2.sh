#!/usr/bin/env bash
# Session 8, second call: where the AH panel's top kernel spends its time (clock64 per phase,
# gpuqr_panel_bench --trace 1), the panel times, and every tall-skinny method at n = 512 and
# 1024 (which one can reach 3x cuSOLVER there), in the same run.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_panel_bench gpuqr_tsqr_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
P=$b/bench/gpuqr_panel_bench
timeout 60 $P --trace 1 --h 64,256,1024,4096,16384,262144,1048576 --precision d,s | tee "$w/ah_trace.txt"
timeout 90 $P --h 256,1024,4096,16384,262144 --precision d,s --repeat 30 | tee "$w/panel_times.txt"
echo "t $(( $(date +%s) - s )) s"
timeout 200 $b/bench/gpuqr_tsqr_bench --m 1048576 --n 512,1024 --precision d --methods householder,qrf_ah,tsqr,cholesky_qr2 --forms r,explicit,geqrf --repeat 2 > "$w/tsqr_methods.txt" 2>&1; echo "tsqr methods rc $?"
grep -vE "^#|^$" "$w/tsqr_methods.txt" | head -40
