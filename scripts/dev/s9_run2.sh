#!/usr/bin/env bash
# Session 9, second call: the merged batched work (helpers' branches s9-tall and s9-var, the
# blocked panel's refined larfg scalars): every batched CUDA test; the batched table against
# cublas<t>geqrfBatched / cuSOLVER over streams at 1 GiB per batch; then the A/B knobs of the
# variable-size batch (GPUQR_BATCHED_VGEMM, _OVERLAP, _PANEL_SPLIT) and of the tall kernel
# (GPUQR_BATCHED_TALL, _TALL_RL) at 0.5 GiB, ours only.
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
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*Batched*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -60
grep -E "first (tau|beta)" "$w/tests.log" | head -4
echo "t $(( $(date +%s) - s )) s"
B=$b/bench/gpuqr_batched_bench
timeout 200 $B --n 16,32,64,128,512 --shape both --precision both --gib 1 > "$w/batched.txt" 2>&1; echo "batched rc $?"; grep -vE "^$" "$w/batched.txt"
echo "t $(( $(date +%s) - s )) s"
V="--only-variable --precision both --gib 0.5 --no-baseline"
GPUQR_BATCHED_VGEMM=0 GPUQR_BATCHED_OVERLAP=0 timeout 60 $B $V > "$w/var_old.txt" 2>&1; echo "== var old rc $?"; grep var "$w/var_old.txt"
GPUQR_BATCHED_OVERLAP=0 timeout 60 $B $V > "$w/var_nooverlap.txt" 2>&1; echo "== var no overlap rc $?"; grep var "$w/var_nooverlap.txt"
GPUQR_BATCHED_PANEL_SPLIT=1 timeout 60 $B $V > "$w/var_split.txt" 2>&1; echo "== var split rc $?"; grep var "$w/var_split.txt"
echo "t $(( $(date +%s) - s )) s"
T="--n 16,32,64 --shape both --precision double --gib 0.5 --no-baseline --no-variable"
for k in "GPUQR_BATCHED_TALL=0" "GPUQR_BATCHED_TALL=2" "GPUQR_BATCHED_TALL_RL=8" "GPUQR_BATCHED_TALL_RL=32" "GPUQR_BATCHED_TALL=1"; do
  env $k timeout 40 $B $T > "$w/tall_$k.txt" 2>&1; echo "== $k rc $?"; grep -E "^fp" "$w/tall_$k.txt"
done
echo "t $(( $(date +%s) - s )) s"
