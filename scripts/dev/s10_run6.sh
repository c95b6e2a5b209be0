#!/usr/bin/env bash
# Session 10, sixth call: CUDA graph replay of the dense calls (issue 3, opt-in) — its tests,
# the dense CUDA tests with graphs on by default, and gpuqr_tester --graph both (ours without
# and with graphs beside cuSOLVER in one row) at 1024-4096; the FP64 rows kernel's
# branch-free form A/B (GPUQR_BATCHED_ROWS_FAST) for 64 x 16 against cuBLAS.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench gpuqr_tester > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
B=$b/bench/gpuqr_batched_bench
for F in 0 1 0 1; do
  GPUQR_BATCHED_ROWS_FAST=$F timeout 40 $B --n 16 --shape tall --precision double --gib 1 --no-variable > "$w/rows_fast$F.txt" 2>&1; echo "== rows fast $F rc $?"; grep -E "64x16 " "$w/rows_fast$F.txt" | cut -c1-110
done
echo "t $(( $(date +%s) - s )) s"
T=$b/bench/gpuqr_tester
timeout 150 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 10 --warmup 3 --graph both --json "$w/graph_geqrf.jsonl" > "$w/graph_geqrf.txt" 2>&1; echo "tester geqrf rc $?"; cut -c1-200 "$w/graph_geqrf.txt" | grep -vE "^$" | head -20
timeout 100 $T --backend cuda --baseline cusolver --op orgqr,gels --precision d,s --dim 1024,4096 --repeat 5 --warmup 3 --graph both > "$w/graph_orgqr_gels.txt" 2>&1; echo "tester orgqr/gels rc $?"; cut -c1-200 "$w/graph_orgqr_gels.txt" | grep -vE "^$" | head -16
echo "t $(( $(date +%s) - s )) s"
timeout 100 $b/tests/gpuqr_tests --gtest_filter='GraphCache*:*CudaGraphReplay*' > "$w/tests_graph.log" 2>&1; echo "graph tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|updates|stats" "$w/tests_graph.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_graph.log" | head -40
GPUQR_GRAPH=1 timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Dense*cuda*:*Dense*Cuda*:*Householder*cuda*:*Gels*cuda*' > "$w/tests_dense_graph_on.log" 2>&1; echo "dense tests (graphs on) rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests_dense_graph_on.log" | head -10; grep -B3 -A12 "Failure" "$w/tests_dense_graph_on.log" | head -40
echo "t $(( $(date +%s) - s )) s"
