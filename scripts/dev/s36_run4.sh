#!/usr/bin/env bash
# Session 36 run 4 (final code): TsqrMethods' wide CholeskyQR2 tests after their three-form
# checks became one helper (mixed precision, block-Jacobi, wide shapes), and gram_status's twin.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests
T=$b/tests/gpuqr_tests
timeout 300 $T --gtest_filter='*BlockJacobi*cuda*:*GramStatus*:*MixedPrecisionCholeskyQr2*cuda*:*CholeskyQr2OnWideTallShapes*cuda*:*GeqrfByCholeskyPanels*cuda*' > "$w/tests4.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|^\[  PASSED|Failure|^\[       OK" "$w/tests4.log" | head -20; cp "$w/tests4.log" "$out/"
stamp
