#!/usr/bin/env bash
# Session 29, runs 2-3: the AH step (src/cuda/panel_qr_ah_step.cu) with its update phases
# rewritten (V slice in shared memory, C in registers, W by 4 x 3 register tiles, W's sum
# scattered over the cluster, Y gathered): its twin test, racecheck, the dense / blocked
# tests with it on, one step's phase clocks, and geqrf with GPUQR_AH_STEP=0 / 1 alternated.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_panel_bench
T=$b/tests/gpuqr_tests
timeout 200 $T --gtest_filter='*PanelQrUpdateStep*-*cpu*' > "$w/twin_step.log" 2>&1; echo "step twin rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/twin_step.log" | head; grep -B3 -A12 "Failure" "$w/twin_step.log" | head -60
stamp
GPUQR_AH_STEP=1 timeout 200 $T --gtest_filter='*Dense.*cuda*:*BlockedQR.*cuda*:*CudaGraphReplay.*cuda*' > "$w/dense_step.log" 2>&1; echo "dense with step rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/dense_step.log" | head; grep -B3 -A12 "Failure" "$w/dense_step.log" | head -40
stamp
X=$b/bench/gpuqr_tester
GPUQR_AH_STEP=1 GPUQR_AH_STEP_TRACE=1 timeout 60 $X --backend cuda --op geqrf --precision d,s --dim 1024 --repeat 1 --warmup 0 > "$w/trace.txt" 2>&1
grep -E "^ah_step h (1024|512|128) " "$w/trace.txt" | head -12
timeout 60 $b/bench/gpuqr_panel_bench --trace 1 --h 1024 --precision d,s 2>&1 | grep trace
run() { env "$@" timeout 60 $X --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^geqrf ' "$w/t.txt" | awk '{printf "%s%s %s/%s=%s %s  ", $5, $2, $8, $11, $13, $NF}')"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2 3; do run GPUQR_AH_STEP=0; run GPUQR_AH_STEP=1; done
stamp
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter='*PanelQrUpdateStep*cuda_double' > "$w/san_racecheck.log" 2>&1; echo "racecheck rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$w/san_racecheck.log" | head -4
stamp
