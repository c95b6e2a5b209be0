#!/usr/bin/env bash
# Session 16, seventh call (after the last CUDA edit): every CUDA test, memcheck/racecheck on
# the one-block Cholesky's tests, its phase trace, the tall-skinny grid against cuSOLVER, and
# a probe of cuBLAS's FP32 / FP64 GEMM emulation (GPUQR_CUBLAS_MATH) on the wide shapes.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
B=$b/bench/gpuqr_tsqr_bench
timeout 320 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:GraphCache*' > "$w/tests_cuda.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|tests ran" "$w/tests_cuda.log" | head -20
stamp
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*SmallCholesky*:*CholeskyBreakdown*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
GPUQR_SMALL_CHOLESKY_TRACE=1 timeout 60 $B --baseline none --m 1048576 --n 64,128 --precision d,s --methods cholesky_qr2 --forms rb --repeat 1 2>&1 | grep -E "small_cholesky" | awk 'NR % 4 == 0'
stamp
timeout 300 $B --m 1048576 --n 16,32,64,128,256,512,1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 --json "$w/tsqr.jsonl" | tee "$w/tsqr.txt" | grep -E "^[ds] |failed"
stamp
for st in performant eager; do
  echo "FP32 bf16x9, CUBLAS_EMULATION_STRATEGY=$st"
  GPUQR_CUBLAS_MATH=bf16x9 CUBLAS_EMULATION_STRATEGY=$st timeout 120 $B --m 1048576 --n 512,1024 --precision s --methods automatic --forms rb,explicit,geqrf --repeat 2 | tee "$w/tsqr_bf16x9_$st.txt" | grep -E "^s |failed"
done
echo "FP64 fixedpoint, eager"
GPUQR_CUBLAS_MATH=fixedpoint CUBLAS_EMULATION_STRATEGY=eager timeout 120 $B --m 1048576 --n 1024 --precision d --methods automatic --forms rb,explicit --repeat 2 | tee "$w/tsqr_fixedpoint.txt" | grep -E "^d |failed"
stamp
