#!/usr/bin/env bash
# Session 7, sixth call: everything merged (sparse: two-tier page-locked slots; issue 5: the
# segmented deletion-rotation kernel and the blocks' G built many per launch; issue 3: orgqr,
# if merged): tests, sanitizers on the new kernels, and the benchmarks with the old paths in
# the same run (GPUQR_REMOVE_ROTATIONS=0, GPUQR_ORGQR_OLD=1 where present).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_sparse_gpu_bench gpuqr_update_bench gpuqr_tester > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
t=$b/tests/gpuqr_tests
timeout 150 $t --gtest_filter='*Sparse*:*Update*:*update*:*Orgqr*:*orgqr*:*Larft*:*larft*:*Blocked*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A10 "Failure" "$w/tests.log" | head -30
echo "t $(( $(date +%s) - s )) s"
timeout 90 compute-sanitizer --tool racecheck $t --gtest_filter='*QrUpdateCudaTwins.DeletionRotationsMatch*:*QrUpdateCudaTwins.AccumulatedRotationBlocksMatch*' > "$w/racecheck_update.log" 2>&1; echo "racecheck update rc $?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$w/racecheck_update.log" | head -3
timeout 60 compute-sanitizer --tool memcheck $t --gtest_filter='*QrUpdateCudaTwins.DeletionRotationsMatch*:*QrUpdateCudaTwins.AccumulatedRotationBlocksMatch*' > "$w/memcheck_update.log" 2>&1; echo "memcheck update rc $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/memcheck_update.log" | head -3
echo "t $(( $(date +%s) - s )) s"
for v in 1 0; do
  GPUQR_REMOVE_ROTATIONS=$v timeout 100 $b/bench/gpuqr_update_bench --only remove --repeat 1 > "$w/update_remove_new$v.txt" 2>&1; echo "== remove rows, GPUQR_REMOVE_ROTATIONS=$v rc $?"; grep -vE "^#|^$" "$w/update_remove_new$v.txt" | tail -n 34
done
echo "t $(( $(date +%s) - s )) s"
timeout 150 $b/bench/gpuqr_sparse_gpu_bench --mode qless --warmup 0 --repeat 1 --sides gpu,spqr --gen grid3d:45 --json "$w/sparse_bench_large.jsonl" > "$w/sparse_bench_large.txt" 2>&1; echo "bench large rc $?"
grep -vE "^ *BLAS and|^intensity|^x_gpu" "$w/sparse_bench_large.txt" | tail -n 8
