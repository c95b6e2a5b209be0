#!/usr/bin/env bash
# Session 30: every CUDA test with programmatic dependent launch on (the default), unsharded,
# less GramTf32.WideGramWithinFp32Bounds (a CPU-bound FP32 reference of 110-190 s that no
# launch here touches; it passed in s30_pdl.sh's shard 0), then geqrf and gels against
# cuSOLVER with graph replay both ways.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
timeout 380 $b/tests/gpuqr_tests --gtest_filter='-*cpu*:*WideGramWithinFp32Bounds*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
cp "$w/tests.log" "$out/"
stamp
timeout 50 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --graph both --op geqrf,gels --precision d,s --dim 1024,4096 --repeat 5 --warmup 2 > "$out/tester_final.txt" 2>&1; echo "tester rc $?"
grep -E "^(op|geqrf|gels) " "$out/tester_final.txt"
stamp
