#!/usr/bin/env bash
# Session 29, run 9 (after the block-size rule's last edit: 256 unless m > 4k up to k = 2048):
# the CUDA tests of every route the rule feeds, then the tester on square, 2:1-4:1 and very
# tall shapes with the defaults.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
timeout 250 $b/tests/gpuqr_tests --gtest_filter='*Dense*cuda*:*BlockedQR.*cuda*:*CudaGraphReplay.*cuda*:*TsqrMethods.*cuda*:*Staging*cuda*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran" "$w/tests.log" | head; grep -B3 -A12 "Failure" "$w/tests.log" | head -30; cp "$w/tests.log" "$out/"
stamp
timeout 150 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf,gels --precision d,s --dim 1024,3072x1024,4096x1024,8192x1024,65536x1024 --repeat 3 --warmup 1 > "$out/tester.txt" 2>&1; echo "tester rc $?"
grep -E "^(op|geqrf|gels) " "$out/tester.txt"
stamp
