#!/usr/bin/env bash
# Session 31, branch graph-default (on main's T beside the scaling): every CUDA test, graphs
# on by default (a key captured at its second call), unsharded, less
# GramTf32.WideGramWithinFp32Bounds (a CPU-bound FP32 reference of 110-190 s that nothing
# here touches); then the host profile of geqrf 1024 with graphs off and in the default mode
# (its warmup calls show the first call, the capture and the first replay).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_host_profile
timeout 400 $b/tests/gpuqr_tests --gtest_filter='-*cpu*:*WideGramWithinFp32Bounds*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
grep -A8 "DefaultModeCapturesAtTheSecondCall" "$w/tests.log" | head -12
cp "$w/tests.log" "$out/"
stamp
for g in 0 2; do for p in d s; do timeout 30 $b/bench/gpuqr_host_profile 1024 100 $p $g > "$out/host_profile_${p}_g$g.txt" 2>&1; head -2 "$out/host_profile_${p}_g$g.txt"; done; done
stamp
