#!/usr/bin/env bash
# Session 12, fifth call: our back substitution for few right-hand sides (trsm_few_rhs.cu,
# in the CUDA trsm leaf), the solve enqueued before R's diagonal is read back, and the
# few-rows add kernel's V kept in shared memory (u_j . u beside the square root). Every CUDA
# test, memcheck and racecheck on both kernels' twin tests, the update bench (add), gels
# against cuSOLVER.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; rm -rf "$w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_update_bench gpuqr_tester > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 60 $b/tests/gpuqr_tests --gtest_filter='*TrsmFewRhs*:*QrUpdateCudaTwins*' > "$w/tests_twins.log" 2>&1; echo "twins rc $?"
grep -E "^\[  FAILED|PASSED" "$w/tests_twins.log" | head; grep -B3 -A12 "Failure" "$w/tests_twins.log" | head -50
timeout 60 $b/bench/gpuqr_update_bench --only add --pmax 16 --repeat 5 > "$w/update_small.txt" 2>&1; echo "bench rc $?"; cat "$w/update_small.txt"
echo "t $(( $(date +%s) - s )) s"
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*:*TrsmFewRhs*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
echo "t $(( $(date +%s) - s )) s"
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:GraphCache*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]" "$w/tests_cuda.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_cuda.log" | head -40
echo "t $(( $(date +%s) - s )) s"
timeout 50 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op gels --precision d,s --dim 1024,4096 --repeat 3 --warmup 2 > "$w/tester_gels.txt" 2>&1; echo "tester rc $?"; cut -c1-170 "$w/tester_gels.txt" | grep -E "^gels|passed|ratio|op " | head -12
echo "t $(( $(date +%s) - s )) s"
timeout 100 $b/bench/gpuqr_update_bench --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
echo "t $(( $(date +%s) - s )) s"
