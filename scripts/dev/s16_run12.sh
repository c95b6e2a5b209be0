#!/usr/bin/env bash
# Session 16, twelfth call (after the last change, host code: the FP32 Householder rule from
# m n >= 2^31): the tall-skinny method tests on the GPU, and FP32 R alone by `automatic`
# against CholeskyQR2 named at 2^21 and 2^22 rows.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*TsqrMethods*:*TsqrBadInput*:-*cpu*' > "$w/tests_tsqr.log" 2>&1; echo "tsqr tests rc $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure|WideTallSkinny.*OK" "$w/tests_tsqr.log" | head -20
stamp
timeout 200 $B --m 2097152,4194304 --n 512,1024 --precision s --methods automatic,cholesky_qr2 --forms rb --repeat 3 | tee "$w/tsqr_rb.txt" | grep -E "^s |failed"
stamp
