#!/usr/bin/env bash
# Prepared in session 33 (branch ah-shadow-private, not yet run on a GPU): the shadow warps
# (mode 10, the default) read a scratch block of shared memory that nothing writes (the b x b
# kernel's wb) where their twins read x and the published steps, so that racecheck has no
# hazard to report (session 33 run 3 reported them at qrf_ah_panel.cuh:416). In one call:
# racecheck of one AH panel (the trace: four calls of one 256-row panel) in modes 10 and 7, the
# AH routes' twin tests, the phases and panel times, the tester alternated twice between
# modes 7 and 10, then every CUDA test but GramTf32.WideGramWithinFp32Bounds as time allows.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_panel_bench
T=$b/tests/gpuqr_tests
P=$b/bench/gpuqr_panel_bench
for m in 10 7; do GPUQR_AH_WARP=$m timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $P --trace 1 --h 256 --precision d > "$w/racecheck_warp$m.log" 2>&1; echo "racecheck warp $m rc $?"; grep -E "SUMMARY|trace" "$w/racecheck_warp$m.log" | head -3; cp "$w/racecheck_warp$m.log" "$out/"; done
stamp
F='*KernelTwins*PanelQrAh*cuda*:*KernelTwins*PanelQrUpdateStep*cuda*'
timeout 120 $T --gtest_filter="$F" > "$w/tests1.log" 2>&1; echo "twin tests rc $?"
grep -E "^\[  FAILED|PASSED" "$w/tests1.log" | head; cp "$w/tests1.log" "$out/"
for m in 7 10; do GPUQR_AH_WARP=$m timeout 30 $P --trace 1 --h 1024 --precision d,s 2>&1 | sed "s/^/[warp $m] /"; done
for m in 7 10; do GPUQR_AH_WARP=$m timeout 30 $P --h 256,1024,4096 --precision d,s --repeat 30 2>&1 | grep -v "^prec" | sed "s/^/[warp $m] /"; done
X=$b/bench/gpuqr_tester
run() { env "$@" timeout 60 $X --backend cuda --baseline cusolver --graph both --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 7 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^(geqrf|orgqr|gels) ' "$w/t.txt" | awk '{printf "%s:%s%s %s/%s=%s g %s=%s %s  ", $1, $5, $2, $8, $11, $13, $14, $15, $NF}')"; echo "== $*" >> "$out/tester_ab.txt"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2; do run GPUQR_AH_WARP=7; run GPUQR_AH_WARP=10; done
stamp
full_suite "${SUITE_BUDGET:-590}"
stamp
