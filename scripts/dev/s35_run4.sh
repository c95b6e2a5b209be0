#!/usr/bin/env bash
# Session 35 run 4: the FP64 product-Gram kernel (dmma_gram_kernel<128, product, m16n8k4>,
# CholeskyQR2's single-pass second Gram matrix: ncu in run 3 found it at ~50% of the DMMA
# pipe with 40 bytes of register spill) in three variants picked by
# GPUQR_GRAM_PRODUCT_VARIANT (1: the Gram phase's 8-row blocks not unrolled, 2: the product's
# k loop unrolled by 2, 3: both). Their tests, then R alone by CholeskyQR2 at n = 128 (one
# product-Gram pass a call) and geqrf's form at 2^22 x 1024, the variants alternated.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
for v in 1 2 3; do GPUQR_GRAM_PRODUCT_VARIANT=$v timeout 60 $T --gtest_filter='*GramKernels*cuda_double*' > "$w/t$v.log" 2>&1; echo "variant $v tests rc $? $(grep -E '^\[  PASSED|FAILED' "$w/t$v.log" | head -3 | tr '\n' ' ')"; cp "$w/t$v.log" "$out/tests_variant$v.log"; done
stamp
TS=$b/bench/gpuqr_tsqr_bench
P=GPUQR_GRAM_PRODUCT_VARIANT
timeout 120 $TS --m 1048576,4194304 --n 128 --precision d --methods cholesky_qr2 --forms r --repeat 5 --variants default,$P=1,$P=2,$P=3,default,$P=1,$P=2,$P=3 > "$out/bench_r128.txt" 2>&1; echo "bench r rc $?"
grep -E "^d " "$out/bench_r128.txt"
stamp
timeout 200 $TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --variants default,$P=1,$P=3,default,$P=1,$P=3 > "$out/bench_d22.txt" 2>&1; echo "bench 2^22 rc $?"
grep -E "^d " "$out/bench_d22.txt"
stamp
