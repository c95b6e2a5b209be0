#!/usr/bin/env bash
# Session 33, third call: ncu (run 2) put 45% of the b x b kernel's stall cycles on instruction
# fetch (Algorithm 2 unrolled: ~3 KB of code a step, run once per launch). Mode 10 (now the
# default): the block's four idle warps run their twins' instructions ahead, storing nothing,
# the four warps meeting at a named barrier. In one call: every CUDA test but
# GramTf32.WideGramWithinFp32Bounds (the new default everywhere; the bitwise test against
# mode 7), the phases and panel times of modes 7 and 10, the tester (geqrf, graphs off and
# on) alternated twice, ncu's stall reasons in mode 10, racecheck of the shadow test.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_panel_bench
T=$b/tests/gpuqr_tests
timeout 300 $T --gtest_filter='-*cpu*:*WideGramWithinFp32Bounds*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
grep -E "^\[       OK \] KernelTwins.*(PanelQrAh|PanelQrUpdateStep)" "$w/tests.log" | head -20
cp "$w/tests.log" "$out/"
stamp
P=$b/bench/gpuqr_panel_bench
for m in 7 10; do for h in 1024 4096; do GPUQR_AH_WARP=$m timeout 30 $P --trace 1 --h $h --precision d,s 2>&1 | sed "s/^/[warp $m] /"; done; done
for m in 7 10; do GPUQR_AH_WARP=$m timeout 30 $P --h 256,1024,4096 --precision d,s --repeat 30 2>&1 | grep -v "^prec" | sed "s/^/[warp $m] /"; done
X=$b/bench/gpuqr_tester
run() { env "$@" timeout 60 $X --backend cuda --baseline cusolver --graph both --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 7 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^(geqrf|orgqr|gels) ' "$w/t.txt" | awk '{printf "%s:%s%s %s/%s=%s g %s=%s %s  ", $1, $5, $2, $8, $11, $13, $14, $15, $NF}')"; echo "== $*" >> "$out/tester_ab.txt"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2; do run GPUQR_AH_WARP=7; run GPUQR_AH_WARP=10; done
stamp
GPUQR_AH_WARP=10 timeout 25 ncu --kernel-name regex:ah_top_kernel --launch-skip 2 --launch-count 1 --section WarpStateStats --section SchedulerStats $P --h 1024 --precision d --repeat 3 > "$out/ncu_warp10.txt" 2>&1; echo "ncu warp 10 rc $?"; grep -E "Warp Cycles Per Issued|cycles being stalled|represents about" "$out/ncu_warp10.txt" | head -6
stamp
left=$(( 590 - ($(date +%s) - s) )); [ $left -gt 5 ] && { timeout $left compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter='*ShadowWarps*cuda_double' > "$w/san_racecheck.log" 2>&1; echo "racecheck rc $? (limit $left s)"; grep -E "SUMMARY|PASSED|FAILED" "$w/san_racecheck.log" | head -3; cp "$w/san_racecheck.log" "$out/"; }
stamp
