#!/usr/bin/env bash
# Session 9, third call: the second round of the helpers' branches (s9-tall2: the tall kernel
# faster, default outside_small; s9-var2: a fused variable-shape update kernel, cuBLAS by
# default, no split panels): every CUDA test (the batched routes also serve the sparse fronts);
# the A/B of GPUQR_BATCHED_VGEMM / _OVERLAP on the variable batch and of the tall kernel's
# knobs (GPUQR_BATCHED_TALL_V, _MINB), ours only at 0.5 GiB; then the batched table against cuBLAS at 1 GiB.
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
V="--only-variable --precision both --gib 0.5 --no-baseline"
for k in "GPUQR_BATCHED_VGEMM=0 GPUQR_BATCHED_OVERLAP=0" "GPUQR_BATCHED_VGEMM=0" "GPUQR_BATCHED_VGEMM=1 GPUQR_BATCHED_OVERLAP=0" "GPUQR_BATCHED_VGEMM=1" "GPUQR_BATCHED_VGEMM=3"; do
  f="$w/var_$(echo $k | tr ' =' '__').txt"; env $k timeout 60 $B $V > "$f" 2>&1; echo "== $k rc $?"; grep -E "var 8|classes" "$f" | cut -c1-110
done
echo "t $(( $(date +%s) - s )) s"
T="--n 16,32,64 --shape both --precision double --gib 0.5 --no-baseline --no-variable"
for k in "GPUQR_BATCHED_TALL=0" "GPUQR_BATCHED_TALL_V=0" "GPUQR_BATCHED_TALL_V=1" "GPUQR_BATCHED_TALL_MINB=2" "GPUQR_BATCHED_TALL_MINB=4" "GPUQR_BATCHED_TALL_V=1 GPUQR_BATCHED_TALL_MINB=4" "GPUQR_BATCHED_TALL_V=1 GPUQR_BATCHED_TALL_MINB=2"; do
  f="$w/tall_$(echo $k | tr ' =' '__').txt"; env $k timeout 40 $B $T > "$f" 2>&1; echo "== $k rc $?"; grep -E "^fp" "$f" | cut -c1-60
done
echo "t $(( $(date +%s) - s )) s"
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
for k in "GPUQR_BATCHED_TALL_V=1" "GPUQR_BATCHED_TALL_MINB=4" "GPUQR_BATCHED_TALL_V=1 GPUQR_BATCHED_TALL_MINB=4"; do
  f="$w/tests_tall_$(echo $k | tr ' =' '__').log"; env $k timeout 60 $b/tests/gpuqr_tests --gtest_filter='*BatchedTallSmallCuda*' > "$f" 2>&1; echo "== tall tests $k rc $?"; grep -E "^\[  FAILED|PASSED" "$f" | head -5
done
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests_cuda.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_cuda.log" | head -60
grep -E "first (tau|beta)" "$w/tests_cuda.log" | head -4
echo "t $(( $(date +%s) - s )) s"
timeout 150 $B --n 16,32,64,128,512 --shape both --precision both --gib 1 > "$w/batched.txt" 2>&1; echo "batched rc $?"; grep -vE "^$" "$w/batched.txt" | cut -c1-125
echo "t $(( $(date +%s) - s )) s"
