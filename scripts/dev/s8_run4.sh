#!/usr/bin/env bash
# Session 8, fourth call: the blocked route of the batched QR (helper, branch s8-blocked:
# panel kernel + cuBLAS batched GEMMs) and the AH top kernel with the old V^T V loops back.
# Batched and AH tests, memcheck on the blocked route, the batched bench A/B
# (GPUQR_BATCHED_ROUTE=old vs default) against cublasDgeqrfBatched in the same run, the nb sweep,
# and geqrf against cuSOLVER.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench gpuqr_tester gpuqr_panel_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 120 $b/tests/gpuqr_tests --gtest_filter='*Batched*:*KernelTwins*:*BlockedQR*:*TileEngine*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -50
timeout 100 compute-sanitizer --tool memcheck $b/tests/gpuqr_tests --gtest_filter='BatchedBlocked*StridedAndPointer*cuda_double*' > "$w/memcheck.log" 2>&1; echo "memcheck rc $?"
grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran" "$w/memcheck.log" | head -5
echo "t $(( $(date +%s) - s )) s"
B=$b/bench/gpuqr_batched_bench
GPUQR_BATCHED_ROUTE=old timeout 70 $B --n 64,128,256,512 --shape both --precision double --gib 0.5 --no-baseline > "$w/batched_old.txt" 2>&1; echo "old rc $?"; grep -vE "^$" "$w/batched_old.txt" | tail -n 14
timeout 100 $B --n 64,128,256,512 --shape both --precision double --gib 0.5 > "$w/batched_new.txt" 2>&1; echo "new rc $?"; grep -vE "^$" "$w/batched_new.txt" | tail -n 16
echo "t $(( $(date +%s) - s )) s"
GPUQR_BATCHED_NB=16 timeout 50 $B --n 64,128,256,512 --shape both --precision double --gib 0.5 --no-baseline --no-variable > "$w/batched_nb16.txt" 2>&1; echo "nb16 rc $?"; grep -vE "^$" "$w/batched_nb16.txt" | tail -n 10
timeout 60 $B --n 64,128,256,512 --shape square --precision float --gib 0.5 > "$w/batched_float.txt" 2>&1; echo "float rc $?"; grep -vE "^$" "$w/batched_float.txt" | tail -n 8
timeout 40 $B --n 64,128,512 --shape square --precision double --gib 0.5 --listed --no-variable --no-baseline > "$w/batched_listed.txt" 2>&1; echo "listed rc $?"; grep -vE "^$" "$w/batched_listed.txt" | tail -n 5
echo "t $(( $(date +%s) - s )) s"
T=$b/bench/gpuqr_tester
timeout 60 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/tester.txt" 2>&1; echo "tester rc $?"
grep -vE "^#|^$" "$w/tester.txt" | tail -n 8
timeout 30 $b/bench/gpuqr_panel_bench --trace 1 --h 1024,16384 --precision d,s | tee "$w/ah_trace.txt"
