#!/usr/bin/env bash
# Session 20, sixth call: the AH step with C staged by 16-row tiles and the cluster sums' loads
# in flight together. Its twin test, the phase clocks of every step of a geqrf 1024 FP64
# (GPUQR_AH_STEP_TRACE=1), then geqrf 1024 / 4096 against cuSOLVER, step on / off, with and
# without look-ahead.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
timeout 120 $b/tests/gpuqr_tests --gtest_filter='*PanelQrUpdateStep*:*BlockedQR*:-*cpu*' > "$w/tests_step.log" 2>&1; echo "step tests rc $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure" "$w/tests_step.log" | head -10
stamp
T=$b/bench/gpuqr_tester
GPUQR_AH_STEP=1 GPUQR_AH_STEP_TRACE=1 timeout 60 $T --backend cuda --baseline none --op geqrf --precision d,s --dim 1024 --repeat 1 --warmup 0 --no-check > "$w/trace.txt" 2>&1; echo "trace rc $?"
grep "ah_step" "$w/trace.txt" | head -12
grep "ah_step h 1024" "$w/trace.txt" | head -4
run() { env "$@" timeout 60 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,4096 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^geqrf ' $w/t.txt | awk '{printf "%s%s %s/%s=%s  ", $2, $5, $8, $11, $13}')"; cat "$w/t.txt" >> "$w/tester_all.txt"; }
run GPUQR_AH_STEP=0
run GPUQR_AH_STEP=1
run GPUQR_AH_STEP=0 GPUQR_LOOKAHEAD=0
run GPUQR_AH_STEP=1 GPUQR_LOOKAHEAD=0
run GPUQR_AH_STEP=0
stamp
