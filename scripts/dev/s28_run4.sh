#!/usr/bin/env bash
# Session 28, fourth call: the b x b kernel as before the session (runs 1-3's routes reverted),
# its twin tests, geqrf against cuSOLVER, and an ncu profile of one ah_top_kernel launch
# (1024 x 32 FP64, Algorithm 2 by four warps): warp stall reasons and per-instruction samples.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_panel_bench gpuqr_tester
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*PanelQrAh*-*cpu*:*KernelTwins*PanelQrUpdateStep*-*cpu*' > "$w/twins.log" 2>&1; echo "twins rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/twins.log" | head; grep -B3 -A14 "Failure" "$w/twins.log" | head -40
P=$b/bench/gpuqr_panel_bench
timeout 60 $P --trace 1 --h 1024 --precision d,s 2>&1
T=$b/bench/gpuqr_tester
timeout 60 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$out/tester.txt" 2>&1; echo "tester rc $?"
grep -E '^geqrf ' "$out/tester.txt" | awk '{printf "  %s %s %s ours %s cusolver %s ratio %s %s\n", $1, $2, $5, $8, $11, $13, $NF}'
stamp
timeout 200 ncu --kernel-name regex:ah_top_kernel --launch-skip 4 --launch-count 1 --section WarpStateStats --section SourceCounters --section LaunchStats -o "$w/prof" $P --h 1024 --precision d --repeat 3 > "$w/ncu.log" 2>&1; echo "ncu rc $?"; tail -3 "$w/ncu.log"
ncu --import "$w/prof.ncu-rep" --page details > "$out/details.txt" 2>&1
ncu --import "$w/prof.ncu-rep" --page source --csv --print-source sass > "$out/source.csv" 2>&1
ls -la "$out"; grep -iE "stall|warp cycles|issued" "$out/details.txt" | head -40
stamp
