#!/usr/bin/env bash
# Session 36 run 2: block-Jacobi preconditioned CholeskyQR2 (cholesky_qr's block_jacobi_ok,
# GPUQR_CHOLQR_BLOCK_JACOBI=0 turns it off). (a) its tests and gram_status's twin test; (b) the
# wide tall-skinny cells against cuSOLVER in the same run, the knob alternated in one
# process: FP64 and FP32 2^22 x 1024 (R alone, explicit Q), 2^20 x 256/512/1024; geqrf's form
# at 2^22 x 1024 (the skewed product-Gram, now default); (c) the whole CUDA suite.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
timeout 150 $T --gtest_filter='*BlockJacobi*cuda*:*GramStatus*' > "$w/tests_new.log" 2>&1; echo "new tests rc $?"
grep -E "^\[  FAILED|^\[  PASSED|Failure" "$w/tests_new.log" | head; cp "$w/tests_new.log" "$out/"
stamp
TS=$b/bench/gpuqr_tsqr_bench
V=default,GPUQR_CHOLQR_BLOCK_JACOBI=0
for p in d s; do
  timeout 110 $TS --m 4194304 --n 1024 --precision $p --methods automatic --forms rb,explicit --repeat 2 --copies 2.2 --variants $V,$V > "$out/bench_${p}22.txt" 2>&1; echo "bench $p 2^22 rc $?"
  grep -E "^$p " "$out/bench_${p}22.txt"
  stamp
done
timeout 100 $TS --m 1048576 --n 256,512,1024 --precision d,s --methods automatic --forms rb,explicit --repeat 3 --variants $V > "$out/bench_20.txt" 2>&1; echo "bench 2^20 rc $?"
grep -E "^[ds] " "$out/bench_20.txt"
stamp
timeout 60 $TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 > "$out/bench_d22_geqrf.txt" 2>&1; echo "bench geqrf rc $?"
grep -E "^d " "$out/bench_d22_geqrf.txt"
stamp
full_suite 590
stamp
