#!/usr/bin/env bash
# Session 29, runs 6-7 (the final code: mode 7 by default, outer block 256 on square CUDA
# calls): half of every CUDA test (gtest shard $1 of 2), then issue 3's tester table (run 6)
# or the host profile and the tester again (run 7).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_host_profile
shard=${1:-0}
GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$shard timeout 330 $b/tests/gpuqr_tests --gtest_filter='-*cpu*' > "$w/tests_$shard.log" 2>&1; echo "tests shard $shard rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran" "$w/tests_$shard.log" | head -20; grep -B3 -A12 "Failure" "$w/tests_$shard.log" | head -40
cp "$w/tests_$shard.log" "$out/"
stamp
X=$b/bench/gpuqr_tester
if [ "$shard" = 0 ]; then
  timeout 150 $X --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$out/tester_final.txt" 2>&1; echo "tester rc $?"
  grep -E "^(op|geqrf|orgqr|gels) " "$out/tester_final.txt"
else
  timeout 60 $b/bench/gpuqr_host_profile 1024 200 d 0 > "$out/host_profile_d.txt" 2>&1; head -1 "$out/host_profile_d.txt"
  timeout 60 $b/bench/gpuqr_host_profile 1024 200 s 0 > "$out/host_profile_s.txt" 2>&1; head -1 "$out/host_profile_s.txt"
  timeout 60 $b/bench/gpuqr_host_profile 1024 100 d 1 > "$out/host_profile_d_graph.txt" 2>&1; head -1 "$out/host_profile_d_graph.txt"
  timeout 150 $X --backend cuda --baseline cusolver --graph both --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$out/tester_final2.txt" 2>&1; echo "tester rc $?"
  grep -E "^(op|geqrf|orgqr|gels) " "$out/tester_final2.txt"
fi
stamp
