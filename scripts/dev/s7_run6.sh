#!/usr/bin/env bash
# Session 7, sixth call: everything merged. Every CUDA test (the orgqr/larft change touches
# geqrf, gels, the updates and the tall-skinny drivers too), sanitizers on the new update
# kernels, and the dense tester with the new larft merges and orgqr against the old paths in
# the same run (GPUQR_LARFT_MERGE=trmm GPUQR_LOOKAHEAD=0 for orgqr; GPUQR_LARFT_MERGE=trmm for
# geqrf and gels).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_tester > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
t=$b/tests/gpuqr_tests
timeout 200 $t --gtest_filter='*cuda*:*Cuda*:*GramKernels*:*TileEngine*:*Batched*:*Sparse*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests_cuda.log" | head -20; grep -B3 -A10 "Failure" "$w/tests_cuda.log" | head -30
echo "t $(( $(date +%s) - s )) s"
timeout 60 compute-sanitizer --tool racecheck $t --gtest_filter='*QrUpdateCudaTwins.DeletionRotationsMatch*:*QrUpdateCudaTwins.AccumulatedRotationBlocksMatch*' > "$w/racecheck_update.log" 2>&1; echo "racecheck update rc $?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$w/racecheck_update.log" | head -3
timeout 40 compute-sanitizer --tool memcheck $t --gtest_filter='*QrUpdateCudaTwins.DeletionRotationsMatch*:*QrUpdateCudaTwins.AccumulatedRotationBlocksMatch*:*OrgqrSameOnOneLaneAndTwo*cuda_double*' > "$w/memcheck_new.log" 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/memcheck_new.log" | head -3
echo "t $(( $(date +%s) - s )) s"
T=$b/bench/gpuqr_tester
timeout 80 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/tester_new.txt" 2>&1; echo "tester new rc $?"
grep -vE "^#|^$" "$w/tester_new.txt" | tail -n 20
GPUQR_LARFT_MERGE=trmm timeout 60 $T --backend cuda --baseline cusolver --op geqrf,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/tester_old_merge.txt" 2>&1; echo "tester old merge (geqrf, gels) rc $?"
grep -vE "^#|^$" "$w/tester_old_merge.txt" | tail -n 14
GPUQR_LARFT_MERGE=trmm GPUQR_LOOKAHEAD=0 timeout 50 $T --backend cuda --baseline cusolver --op orgqr --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/tester_old_orgqr.txt" 2>&1; echo "tester old orgqr rc $?"
grep -vE "^#|^$" "$w/tester_old_orgqr.txt" | tail -n 8
echo "t $(( $(date +%s) - s )) s"
timeout 70 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 8192 --repeat 2 --warmup 1 --no-check > "$w/tester_new_8192.txt" 2>&1; echo "tester 8192 rc $?"
grep -vE "^#|^$" "$w/tester_new_8192.txt" | tail -n 8
