#!/usr/bin/env bash
# Session 30: programmatic dependent launch (src/cuda/pdl.cuh) on the blocked QR's chain of
# small kernels. The tester (geqrf, orgqr, gels against cuSOLVER) with GPUQR_PDL=0 and 1
# alternated, then graph replay with it on, then gtest shard $1 of 2 of every CUDA test.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
shard=${1:-0}
X=$b/bench/gpuqr_tester
run() { env "$@" timeout 90 $X --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^(geqrf|orgqr|gels) ' "$w/t.txt" | awk '{printf "%s:%s%s %s/%s=%s %s  ", $1, $5, $2, $8, $11, $13, $NF}')"; echo "== $*" >> "$out/tester_ab.txt"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2; do run GPUQR_PDL=0; run GPUQR_PDL=1; done
stamp
timeout 60 $X --backend cuda --baseline cusolver --graph both --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$out/tester_graph.txt" 2>&1; echo "graph tester rc $?"
grep -E "^(op|geqrf) " "$out/tester_graph.txt"
stamp
GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$shard timeout 300 $b/tests/gpuqr_tests --gtest_filter='-*cpu*' > "$w/tests_$shard.log" 2>&1; echo "tests shard $shard rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran" "$w/tests_$shard.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_$shard.log" | head -40
cp "$w/tests_$shard.log" "$out/"
stamp
