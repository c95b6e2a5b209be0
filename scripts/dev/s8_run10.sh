#!/usr/bin/env bash
# Session 8, tenth call: the explicit thin Q by one streamed product kernel Q = A X (helper,
# s8-qprod; A/B GPUQR_QPROD=0) against cuSOLVER geqrf+orgqr in the same run; the small batched
# kernel's pivot-lane norm (tests, bench against cublas<t>geqrfBatched); CUDA tests of both.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench gpuqr_tsqr_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Batched*:*Gram*:*Tsqr*:*Tall*:*Chol*:*TallTimesUpper*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
echo "t $(( $(date +%s) - s )) s"
timeout 40 $b/bench/gpuqr_batched_bench --n 16,32 --shape square --precision both --gib 0.5 --no-variable > "$w/batched_small.txt" 2>&1; echo "batched rc $?"; grep -E "^fp" "$w/batched_small.txt"
TS=$b/bench/gpuqr_tsqr_bench
for v in 0 1; do
  GPUQR_QPROD=$v timeout 100 $TS --m 1048576,4194304 --n 32,64,128 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 5 > "$w/tsqr_qprod$v.txt" 2>&1; echo "== qprod $v rc $?"; grep -vE "^#|^$" "$w/tsqr_qprod$v.txt" | grep -vE "GPUQR|device|copy band" | head -40
done
