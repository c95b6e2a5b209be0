#!/usr/bin/env bash
# Session 28, fifth call: Algorithm 2 by four warps with the owner's 8 steps barrier-free
# (factor_block_warps: 5 block barriers instead of 32): twin tests, clock64 phases and panel
# times (run 4 had the previous version: factor 29.1k cycles FP64), issue 3's tester against
# cuSOLVER, the dense / tall-skinny tests, racecheck, and issue 4's geqrf-form cells at 2^20.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_panel_bench gpuqr_tester gpuqr_tsqr_bench
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*-*cpu*' > "$w/twins.log" 2>&1; echo "twins rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/twins.log" | head -20; grep -B3 -A14 "Failure" "$w/twins.log" | head -60
stamp
P=$b/bench/gpuqr_panel_bench
timeout 60 $P --trace 1 --h 1024 --precision d,s 2>&1
timeout 60 $P --h 96,256,1024,4096 --precision d,s --repeat 30 2>&1
stamp
T=$b/bench/gpuqr_tester
timeout 150 $T --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$out/tester.txt" 2>&1; echo "tester rc $?"
grep -E '^(geqrf|orgqr|gels) ' "$out/tester.txt" | awk '{printf "  %s %s %s ours %s cusolver %s ratio %s %s\n", $1, $2, $5, $8, $11, $13, $NF}'
for r in 1 2 3; do timeout 40 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024 --repeat 7 --warmup 2 > "$w/t.txt" 2>&1; echo "1024: $(grep -E '^geqrf ' "$w/t.txt" | awk '{printf "%s %s/%s=%s  ", $5, $8, $11, $13}')"; cat "$w/t.txt" >> "$out/tester_1024.txt"; done
stamp
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*BlockedQR*:*Dense*:*CudaGraphReplay*:*TsqrMethods*:*LarfbTf32*-*cpu*' > "$w/dense.log" 2>&1; echo "dense rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/dense.log" | head -20; grep -B3 -A14 "Failure" "$w/dense.log" | head -40
stamp
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelQrAhMatchesGeqr2OrDeclines*cuda_double' > "$w/san_racecheck.log" 2>&1; echo "racecheck rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$w/san_racecheck.log" | head -4
stamp
timeout 120 $b/bench/gpuqr_tsqr_bench --m 1048576 --n 512,1024 --precision d --methods automatic --forms geqrf --repeat 3 2>&1 | tee "$out/tsqr.txt" | tail -8
stamp
