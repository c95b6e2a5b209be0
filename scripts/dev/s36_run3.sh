#!/usr/bin/env bash
# Session 36 run 3 (final code): block-Jacobi's tests with the float expectation fixed, the
# wide CholeskyQR2 tests; the n >= 256 cells of issue 4's grid at 2^18 and 2^22 (both
# precisions, every form) against cuSOLVER; geqrf's form FP64 2^22 x 1024 in two more
# processes (its spread on the H200).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
timeout 200 $T --gtest_filter='*BlockJacobi*cuda*:*GramStatus*:*MixedPrecisionCholeskyQr2*cuda*:*CholeskyQr2OnWideTallShapes*cuda*:*TsqrCudaTwins*' > "$w/tests3.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|^\[  PASSED|Failure" "$w/tests3.log" | head; cp "$w/tests3.log" "$out/"
stamp
TS=$b/bench/gpuqr_tsqr_bench
timeout 150 $TS --m 262144,4194304 --n 256,512 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 --copies 2.2 > "$out/bench_grid.txt" 2>&1; echo "bench grid rc $?"
grep -E "^[ds] " "$out/bench_grid.txt"
stamp
timeout 60 $TS --m 262144 --n 1024 --precision d,s --methods automatic --forms rb,explicit,geqrf --repeat 3 > "$out/bench_18x1024.txt" 2>&1; echo "bench 2^18 x 1024 rc $?"
grep -E "^[ds] " "$out/bench_18x1024.txt"
stamp
for k in 1 2; do
  timeout 60 $TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 > "$out/bench_d22_geqrf_$k.txt" 2>&1; echo "bench geqrf $k rc $?"
  grep -E "^d " "$out/bench_d22_geqrf_$k.txt"
done
stamp
