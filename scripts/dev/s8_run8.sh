#!/usr/bin/env bash
# Session 8, eighth call: every CUDA test with all of this session's merges (batched small and
# blocked routes, 3xTF32 Gram by default for FP32, AH top kernel, add_rows_small), racecheck on
# the blocked route after its __syncwarp fix, and where the small kernel's 16 x 16 FP64 time
# goes (ncu: occupancy, warp states, memory throughput).
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
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED \]" "$w/tests_cuda.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_cuda.log" | head -40
echo "t $(( $(date +%s) - s )) s"
timeout 60 ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis -k regex:small_geqrf -c 1 $b/bench/gpuqr_batched_bench --n 16 --shape square --precision double --gib 0.5 --no-variable --no-baseline --repeat 1 > "$w/ncu_small16.txt" 2>&1; echo "ncu rc $?"
grep -E "Duration|Throughput|Achieved Occupancy|Theoretical Occupancy|Registers|Block Limit|Warp Cycles Per Issued|Stall|Issued Ipc|Waves Per SM|Grid Size|Block Size|Dynamic Shared" "$w/ncu_small16.txt" | head -40
echo "t $(( $(date +%s) - s )) s"
timeout 170 compute-sanitizer --tool racecheck $b/tests/gpuqr_tests --gtest_filter='*BatchedBlocked*StridedAndPointer*/cuda_double' > "$w/racecheck_blocked.log" 2>&1; echo "racecheck blocked rc $?"
grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$w/racecheck_blocked.log" | head -3
