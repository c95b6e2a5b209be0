#!/usr/bin/env bash
# On a GPU machine, in one go: build (CUDA on, sm_90 unless GPUQR_CUDA_ARCHITECTURES says
# otherwise), run every test (the gpu-labelled ones now run instead of skipping), run the
# panel kernel under compute-sanitizer, then the benchmark: ours against cuSOLVER on the same
# inputs in the same run. Logs, the table and JSON lines go to the folder given as argument.
#
#   bash scripts/gpu_check.sh OUTDIR [quick|full]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:?usage: gpu_check.sh OUTDIR [quick|full]}"
mode="${2:-full}"
mkdir -p "$out"
build_dir="${GPUQR_BUILD_DIR:-build-gpu}"
arch="${GPUQR_CUDA_ARCHITECTURES:-90}"

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv \
  | tee "$out/device.txt"

start=$(date +%s)
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON \
  -DGPUQR_CUDA_ARCHITECTURES="$arch" > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$build_dir" --parallel "$(nproc)" > "$out/build.log" 2>&1 || { grep -E "error" -A5 "$out/build.log" | head -60; exit 1; }
echo "build: $(( $(date +%s) - start )) s"

status=0
ctest --test-dir "$build_dir" --output-on-failure -E package > "$out/ctest.log" 2>&1 || status=1
tail -15 "$out/ctest.log"
"$build_dir/tests/gpuqr_tests" --gtest_filter='*cuda*' > "$out/gpu_tests.log" 2>&1 || status=1
grep -E "FAILED|Failure|PASSED|SKIPPED \]" "$out/gpu_tests.log" | head -40

if command -v compute-sanitizer >/dev/null 2>&1; then
  for tool in memcheck racecheck; do
    # The panel kernels on small panels (the rescaled path included; memcheck also every
    # single-block shape); sanitizers are slow, racecheck most.
    filter='*KernelTwins.PanelQrScales*:*KernelTwins.PanelQrSingleBlockScales*:*KernelTwins.FormV*'
    [ "$tool" = memcheck ] && filter="$filter:*KernelTwins.PanelQrSingleBlockAndCluster*"
    timeout 240 compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$build_dir/tests/gpuqr_tests" --gtest_filter="$filter" \
      > "$out/sanitizer_$tool.log" 2>&1 || { status=1; echo "compute-sanitizer $tool: FAILED"; }
    tail -3 "$out/sanitizer_$tool.log"
  done
fi

tester="$build_dir/bench/gpuqr_tester"
# Accuracy checks run on the host in double (O(n^3) there): checked up to 4096, timed only above.
checked="1024,2048,4096"
unchecked="8192,16384,8192x4096,16384x8192,65536x1024"
"$tester" --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s \
  --dim "$checked" --repeat 5 --warmup 2 --json "$out/bench_checked.jsonl" 2>&1 \
  | tee "$out/bench_checked.txt" || status=1
if [ "$mode" = full ]; then
  "$tester" --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s \
    --dim "$unchecked" --repeat 2 --warmup 1 --no-check --json "$out/bench_large.jsonl" 2>&1 \
    | tee "$out/bench_large.txt" || status=1
fi
echo "gpu_check: total $(( $(date +%s) - start )) s, status $status"
exit "$status"
