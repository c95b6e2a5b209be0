#!/usr/bin/env bash
# Session 10, first call: the batched small kernel's layouts for 32 < m <= 64 (0 every other
# row, 1 contiguous halves, 2 the rows kernel) and the tall kernel's variants (1 today's,
# 2/3 two columns per lane) A/B at 1 GiB against cuBLAS in the same run; the batched CUDA
# tests (every layout and variant against the CPU twin).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
B=$b/bench/gpuqr_batched_bench
for L in 0 1 2; do
  GPUQR_BATCHED_SMALL_TALL=$L timeout 60 $B --n 16 --shape both --precision both --gib 1 --no-variable > "$w/small_L$L.txt" 2>&1; echo "== small layout $L rc $?"; grep -E "x16 " "$w/small_L$L.txt" | cut -c1-110
done
echo "t $(( $(date +%s) - s )) s"
for V in 1 2 3; do
  GPUQR_BATCHED_TALL_V=$V timeout 80 $B --n 32,64 --shape both --precision both --gib 1 --no-variable > "$w/tall_V$V.txt" 2>&1; echo "== tall V$V rc $?"; grep -E "128x32|64x64" "$w/tall_V$V.txt" | cut -c1-110
done
echo "t $(( $(date +%s) - s )) s"
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*BatchedSmallCuda*:*TallSmallCuda*:*BatchedBlockedCuda*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -60
grep -E "first (tau|beta)" "$w/tests.log" | head -6
echo "t $(( $(date +%s) - s )) s"
