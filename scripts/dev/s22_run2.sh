#!/usr/bin/env bash
# Session 22, second call: the diagonal of the short-chain 3xTF32 Gram matrix (run 1: the
# columns' exact sums of squares on the diagonal broke CholeskyQR2's certificate on the
# ill-conditioned FP32 input, 0.847 > 0.25). The bias detector's numbers; the wide CholeskyQR2
# test under each GPUQR_TF32_DIAG and chain length; FP32 2^20 x 512 / 1024 with the same
# settings as variants (times and orthogonality), R alone by CholeskyQR2 (GPUQR_R_HOUSEHOLDER=0).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
timeout 60 $T --gtest_filter='*WideGramChains*' > "$w/bias.log" 2>&1; echo "bias rc $?"
grep -E "bias  |Failure|OK|FAILED" "$w/bias.log" | head -20
for kc in 2048 512; do for d in 0 1 2 3; do
  GPUQR_TF32_KC=$kc GPUQR_TF32_DIAG=$d timeout 60 $T --gtest_filter='*CholeskyQr2OnWideTallShapes*cuda_float' > "$w/cq_${kc}_$d.log" 2>&1
  echo "kc $kc diag $d rc $? $(grep -oE '\|\|W\^T W - I\|\|_F = [0-9.e+-]+' "$w/cq_${kc}_$d.log" | sort -u | tr '\n' ' ')"
done; done
stamp
TS=$b/bench/gpuqr_tsqr_bench
GPUQR_R_HOUSEHOLDER=0 timeout 240 $TS --m 1048576 --n 512,1024 --precision s --methods automatic --forms rb,explicit --repeat 3 --variants default,GPUQR_TF32_DIAG=0,GPUQR_TF32_DIAG=1,GPUQR_TF32_DIAG=2,GPUQR_TF32_KC=512,GPUQR_GRAM_TF32=0 > "$w/tsqr20.txt" 2>&1; echo "tsqr 2^20 rc $?"
grep -E "^[ds] |copy|rror" "$w/tsqr20.txt"
stamp
