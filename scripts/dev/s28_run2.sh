#!/usr/bin/env bash
# Session 28, second call: the Cholesky route with shuffles instead of per-step shared memory
# and barriers; its steps' clocks (slots 8..13); the twin tests; geqrf A/B against mode 4.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_panel_bench gpuqr_tester
P=$b/bench/gpuqr_panel_bench
for m in 4 3; do GPUQR_AH_WARP=$m timeout 60 $P --trace 1 --h 1024 --precision d,s 2>&1 | sed "s/^/warp $m: /"; done
stamp
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*PanelQrAh*-*cpu*:*KernelTwins*PanelQrUpdateStep*-*cpu*' > "$w/twins.log" 2>&1; echo "twins rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/twins.log" | head -20; grep -B3 -A14 "Failure" "$w/twins.log" | head -60
stamp
T=$b/bench/gpuqr_tester
run() { env "$@" timeout 60 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^geqrf ' "$w/t.txt" | awk '{printf "%s%s %s/%s=%s %s  ", $5, $2, $8, $11, $13, $NF}')"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2; do run GPUQR_AH_WARP=4; run GPUQR_AH_WARP=3; done
stamp
