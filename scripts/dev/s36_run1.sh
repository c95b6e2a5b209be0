#!/usr/bin/env bash
# Session 36 run 1 (branch product-gram-skew): (a) the skewed product-Gram pass's tests
# (bitwise against the two-phase pass, exact integers) and the CholeskyQR / panels tests;
# (b) geqrf's form FP64 2^22 x 1024 against cuSOLVER, GPUQR_GRAM_SKEW=0 alternated in one
# process; (c) where the explicit Q (and geqrf's form) of FP64 2^22 x 1024 spends its time:
# ncu's kernel durations at the running clocks, summed by name.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
timeout 200 $T --gtest_filter='*GramKernels*cuda_double*:*TsqrMethods.CholeskyQr*cuda*:*TsqrMethods.GeqrfByCholeskyPanels*cuda*' > "$w/tests1.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|^\[  PASSED" "$w/tests1.log" | head; cp "$w/tests1.log" "$out/"
stamp
TS=$b/bench/gpuqr_tsqr_bench
V=default,GPUQR_GRAM_SKEW=0
timeout 220 $TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --variants $V,$V > "$out/bench_geqrf22.txt" 2>&1; echo "bench geqrf rc $?"
grep -E "^d " "$out/bench_geqrf22.txt"
stamp
for f in explicit geqrf; do
  timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --csv $TS --m 4194304 --n 1024 --precision d --methods automatic --forms $f --repeat 1 --baseline none --copies 2.2 > "$w/ncu_$f.csv" 2> "$w/ncu_$f.err"; echo "ncu $f rc $?"
  python3 scripts/dev/ncu_by_name.py "$w/ncu_$f.csv" 24 | tee "$out/ncu_$f.txt"
  grep -E "^d " "$w/ncu_$f.csv" | head -3
  stamp
done
