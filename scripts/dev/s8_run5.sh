#!/usr/bin/env bash
# Session 8, fifth call: where adding few rows spends its time (ncu kernel times inside the
# bench's profiler range, p = 1 and 16, FP64), memcheck and racecheck on the batched blocked
# route, the batched bench with the panel-width rule (16 for n <= 64 and tall) against
# cublasDgeqrfBatched in the same run.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench gpuqr_update_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
U=$b/bench/gpuqr_update_bench
timeout 60 $U --only add --pmax 16 --precision 64 --repeat 3 > "$w/update_add_small.txt" 2>&1; echo "add small rc $?"; grep -vE "^#|^$" "$w/update_add_small.txt" | tail -n 4
GPUQR_BENCH_PROFILE=1 timeout 120 ncu --profile-from-start off --metrics gpu__time_duration.sum --csv $U --only add --pmax 16 --precision 64 --repeat 1 > "$w/ncu_add_small.csv" 2> "$w/ncu_add_small.err"; echo "ncu add rc $?"
python3 scripts/ncu_summary.py "$w/ncu_add_small.csv" 40 2>&1 | head -44
echo "t $(( $(date +%s) - s )) s"
timeout 90 $b/tests/gpuqr_tests --gtest_filter='*Batched*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
$b/tests/gpuqr_tests --gtest_list_tests --gtest_filter='*BatchedBlocked*' | head -20
timeout 120 compute-sanitizer --tool memcheck $b/tests/gpuqr_tests --gtest_filter='*BatchedBlocked*StridedAndPointer*/cuda_double' > "$w/memcheck.log" 2>&1; echo "memcheck rc $?"
grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran" "$w/memcheck.log" | head -5
timeout 120 compute-sanitizer --tool racecheck $b/tests/gpuqr_tests --gtest_filter='*BatchedBlocked*StridedAndPointer*/cuda_double' > "$w/racecheck.log" 2>&1; echo "racecheck rc $?"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|tests ran" "$w/racecheck.log" | head -5
echo "t $(( $(date +%s) - s )) s"
B=$b/bench/gpuqr_batched_bench
timeout 100 $B --n 16,32,64,128,256,512 --shape both --precision double --gib 0.5 > "$w/batched_d.txt" 2>&1; echo "batched d rc $?"; grep -vE "^$" "$w/batched_d.txt" | tail -n 16
