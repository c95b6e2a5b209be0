#!/usr/bin/env bash
# On a GPU machine: the batched QR's CUDA tests, compute-sanitizer memcheck on its kernels, and
# a short gpuqr_batched_bench. Uses prebuilt binaries from BINDIR when their libraries are all
# there, else builds them (CUDA on, sm_90) in build-batched/.
#
#   bash scripts/batched_gpu_check.sh OUTDIR [BINDIR] [bench options...]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:?usage: batched_gpu_check.sh OUTDIR [BINDIR] [bench options]}"
bin="${2:-}"
shift 2 || shift $#
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader

tests="$bin/gpuqr_tests"
bench="$bin/gpuqr_batched_bench"
# Libraries the prebuilt binaries need that the GPU machine lacks (SuiteSparse) may come along
# in BINDIR/lib.
[ -n "$bin" ] && [ -d "$bin/lib" ] && export LD_LIBRARY_PATH="$(cd "$bin/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -z "$bin" ] || ! "$tests" --gtest_list_tests > /dev/null 2>&1 || \
   ! "$bench" --help > /dev/null 2>&1; then
  echo "building (prebuilt binaries absent or missing libraries)"
  start=$(date +%s)
  cmake -S . -B build-batched -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON \
    -DGPUQR_BUILD_TOOLS=OFF > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
  cmake --build build-batched --parallel "$(nproc)" --target gpuqr_tests gpuqr_batched_bench \
    > "$out/build.log" 2>&1 || { grep -E "error" -A3 "$out/build.log" | head -40; exit 1; }
  echo "build: $(( $(date +%s) - start )) s"
  tests=build-batched/tests/gpuqr_tests
  bench=build-batched/bench/gpuqr_batched_bench
fi

status=0
timeout 240 "$tests" --gtest_filter='*Batched*' > "$out/tests.log" 2>&1 || status=1
grep -E "^\[  FAILED|Failure|Expected|Which is|matrix |PASSED|SKIPPED \]|^  .*\[cuda" "$out/tests.log" | head -60

if command -v compute-sanitizer >/dev/null 2>&1; then
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$tests" \
    --gtest_filter='*BatchedTwinsCuda*:*Batched.GeqrfVariableSizes/cuda_double:*Batched.GelsOptimality/cuda_float' \
    > "$out/memcheck.log" 2>&1 || { status=1; echo "memcheck: FAILED or timed out"; }
  tail -4 "$out/memcheck.log"
fi

timeout 300 "$bench" "$@" 2>&1 | tee "$out/bench.txt" || status=1
exit $status
