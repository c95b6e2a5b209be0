#!/usr/bin/env bash
# Session 8, third call: the AH panel's top kernel rewritten (partials summed with their loads
# in flight, V^T V with unrolled independent sums, T's doubling one entry per thread,
# Algorithm 2 by one warp with the columns in registers). CUDA tests; phase clocks and panel
# times for both Algorithm 2 variants (GPUQR_AH_WARP=1 / 0); geqrf/orgqr/gels against
# cuSOLVER; adding rows (issue 5) against the refactor.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_panel_bench gpuqr_tester gpuqr_update_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 60 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*BlockedQR*' > "$w/tests_ah.log" 2>&1; echo "ah tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests_ah.log" | head -20; grep -B3 -A10 "Failure" "$w/tests_ah.log" | head -40
P=$b/bench/gpuqr_panel_bench
for v in 1 0; do
  GPUQR_AH_WARP=$v timeout 30 $P --trace 1 --h 1024,16384 --precision d,s | tee "$w/ah_trace_warp$v.txt"
  GPUQR_AH_WARP=$v timeout 60 $P --h 256,1024,4096,16384 --precision d,s --repeat 30 | tee "$w/panel_times_warp$v.txt"
done
echo "t $(( $(date +%s) - s )) s"
T=$b/bench/gpuqr_tester
timeout 60 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/tester.txt" 2>&1; echo "tester rc $?"
grep -vE "^#|^$" "$w/tester.txt" | tail -n 20
timeout 60 $T --backend cuda --baseline cusolver --op geqrf,gels --precision d,s --dim 8192,16384 --repeat 2 --warmup 1 --no-check > "$w/tester_large.txt" 2>&1; echo "tester large rc $?"
grep -vE "^#|^$" "$w/tester_large.txt" | tail -n 10
echo "t $(( $(date +%s) - s )) s"
timeout 90 $b/bench/gpuqr_update_bench --only add --repeat 1 > "$w/update_add.txt" 2>&1; echo "add rows rc $?"; grep -vE "^#|^$" "$w/update_add.txt" | tail -n 40
echo "t $(( $(date +%s) - s )) s"
timeout 100 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests_cuda.log" | head -20; grep -B3 -A10 "Failure" "$w/tests_cuda.log" | head -30
