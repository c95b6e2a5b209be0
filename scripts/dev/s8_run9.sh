#!/usr/bin/env bash
# Session 8, ninth call: the small kernel's 16 x 16 FP64 class built for 24 resident warps
# (GPUQR_BATCHED_SMALL_OCC=24) against 16 (A/B, with its tests), and the dense table of issue 3
# (geqrf, orgqr, gels against cuSOLVER, 1024..8192, both precisions) after the AH top kernel.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench gpuqr_tester > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
GPUQR_BATCHED_SMALL_OCC=24 timeout 60 $b/tests/gpuqr_tests --gtest_filter='*BatchedSmall*' > "$w/tests_occ24.log" 2>&1; echo "occ24 tests rc $?"
grep -E "^\[  FAILED|PASSED" "$w/tests_occ24.log" | head -5
B=$b/bench/gpuqr_batched_bench
for v in 0 24 0 24; do
  GPUQR_BATCHED_SMALL_OCC=$v timeout 30 $B --n 16 --shape square --precision double --gib 0.5 --no-variable > "$w/batched_occ$v.txt" 2>&1; echo "== occ $v rc $?"; grep -E "^fp64" "$w/batched_occ$v.txt"
done
echo "t $(( $(date +%s) - s )) s"
T=$b/bench/gpuqr_tester
timeout 80 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/tester.txt" 2>&1; echo "tester rc $?"
grep -vE "^#|^$" "$w/tester.txt" | tail -n 20
timeout 60 $T --backend cuda --baseline cusolver --op geqrf,gels --precision d,s --dim 8192 --repeat 3 --warmup 1 --no-check > "$w/tester_8192.txt" 2>&1; echo "tester 8192 rc $?"
grep -vE "^#|^$" "$w/tester_8192.txt" | tail -n 6
