#!/usr/bin/env bash
# Session 3: blocked application of the row-deletion rotations (GEMMs) on the device: the
# update tests, then removing rows with it off and on in the same run.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; b=build-gpu; s=$(date +%s)
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_update_bench > "$out/build.log" 2>&1 || { grep -E "error" -A5 "$out/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 90 $b/tests/gpuqr_tests --gtest_filter='*QrUpdate*cuda*:*UpdateTwins*:*update*cuda*' > "$out/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$out/tests.log" | head; grep -B2 -A8 "Failure" "$out/tests.log" | head -30
echo "t $(( $(date +%s) - s )) s"
for blk in 0 1; do
  GPUQR_REMOVE_BLOCKED=$blk timeout 100 $b/bench/gpuqr_update_bench --only remove --repeat 1 > "$out/remove_blocked$blk.txt" 2>&1
  echo "blocked=$blk rc $?"; grep -E "^remove" "$out/remove_blocked$blk.txt" | awk '{print $2,$3,$4,$5,$6,$7,$8,$9}'
done
echo "total $(( $(date +%s) - s )) s"
