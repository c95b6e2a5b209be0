#!/usr/bin/env bash
# Session 3, last device run: SuiteSparse carried (Debian 12's libraries, headers), so the CPU
# tests that compare with SuiteSparseQR and the COLAMD-dependent ones run here too; SPQR vs our
# CPU sparse QR on this host's cores; the batched and row-update benchmarks brought up to date.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; b=build-gpu; s=$(date +%s)
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nproc; nvidia-smi --query-gpu=name --format=csv,noheader
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
grep -iE "suitesparse|spqr" "$out/configure.log"
if ! cmake --build $b --parallel 16 > "$out/build.log" 2>&1; then
  grep -E "error" -A5 "$out/build.log" | head -30
  echo "== retry without SuiteSparse"; rm -rf $b
  cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DGPUQR_WITH_SUITESPARSE=OFF -DGPUQR_TEST_WITH_SPQR=OFF > "$out/configure.log" 2>&1
  cmake --build $b --parallel 16 > "$out/build.log" 2>&1 || exit 1
fi
echo "build $(( $(date +%s) - s )) s"
timeout 150 ctest --test-dir $b -E package --output-on-failure > "$out/ctest.log" 2>&1; echo "ctest rc $?"
grep -E "tests passed|FAILED|Failed|SKIPPED \]" "$out/ctest.log" | head -20
echo "t $(( $(date +%s) - s )) s"
ls $b/bench/gpuqr_sparse_vs_spqr && timeout 60 $b/bench/gpuqr_sparse_vs_spqr .carry-matrices/Groebner_id2003_aug.mtx .carry-matrices/Franz6_id1959_aug.mtx 2>&1 | tee "$out/sparse_vs_spqr.txt" | tail -12
echo "t $(( $(date +%s) - s )) s"
timeout 90 $b/bench/gpuqr_batched_bench --precision both --gib 0.5 2>&1 | tee "$out/batched_bench.txt" | tail -40
echo "t $(( $(date +%s) - s )) s"
timeout 100 $b/bench/gpuqr_update_bench --repeat 1 > "$out/update_bench.txt" 2>&1; echo "update rc $?"; tail -45 "$out/update_bench.txt"
echo "total $(( $(date +%s) - s )) s"
