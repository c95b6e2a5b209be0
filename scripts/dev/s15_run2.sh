#!/usr/bin/env bash
# Session 15, second call: split-K for larfb's V^T C and larft's V^T V on tall matrices
# (src/cuda/long_gemm.cu; GPUQR_LONG_SPLIT=0 turns it off). The twin tests of larft/larfb
# (tall cases new) and the dense CUDA tests; the tall-skinny grid's householder route with
# the split, and without it at n = 1024; the dense tester on square and 65536 x 1024 shapes,
# split on and off.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench gpuqr_tester
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*BlockedQR*cuda*:*Dense*cuda*:*Tsqr*cuda*:*TsqrCuda*' > "$w/tests_twins.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]" "$w/tests_twins.log" | head -8; grep -B3 -A12 "Failure" "$w/tests_twins.log" | head -40
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 200 $TS --m 1048576 --n 256,512,1024 --precision d,s --methods householder --forms rb,explicit,geqrf --repeat 3 > "$w/tsqr_hh_split.txt" 2>&1; echo "split rc $?"
grep -vE "^#|^$" "$w/tsqr_hh_split.txt" | head -30
stamp
GPUQR_LONG_SPLIT=0 timeout 100 $TS --m 1048576 --n 1024 --precision d --methods householder --forms geqrf --repeat 3 > "$w/tsqr_hh_nosplit.txt" 2>&1; echo "nosplit rc $?"
grep -vE "^#|^$" "$w/tsqr_hh_nosplit.txt" | tail -3
stamp
T=$b/bench/gpuqr_tester
for sp in 1 0; do
  GPUQR_LONG_SPLIT=$sp timeout 120 $T --backend cuda --baseline cusolver --op geqrf,gels --precision d,s --dim 1024,4096,65536x1024 --repeat 3 --no-check > "$w/tester_split$sp.txt" 2>&1; echo "tester split=$sp rc $?"
  grep -E "geqrf|gels" "$w/tester_split$sp.txt" | head -14
done
stamp
