#!/usr/bin/env bash
# Branch ah-interleaved-rows (prepared in session 28, not yet run on a GPU): Algorithm 2 by
# four warps with the rows interleaved (GPUQR_AH_WARP=6, factor_block_warps_interleaved)
# and with the shorter reciprocal chains (7, batched::short_chain_rsqrt / rcp) against the
# blocked rows (4): the twin tests (they run all three), racecheck, clock64 phases,
# panel times, geqrf against cuSOLVER alternated.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_panel_bench gpuqr_tester
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*-*cpu*' > "$w/twins.log" 2>&1; echo "twins rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/twins.log" | head -20; grep -B3 -A14 "Failure" "$w/twins.log" | head -60
stamp
P=$b/bench/gpuqr_panel_bench
for m in 4 6 7; do GPUQR_AH_WARP=$m timeout 60 $P --trace 1 --h 1024 --precision d,s 2>&1 | sed "s/^/warp $m: /"; done
for m in 4 6 7; do GPUQR_AH_WARP=$m timeout 60 $P --h 96,256,1024,4096 --precision d,s --repeat 30 2>&1 | sed "s/^/warp $m: /"; done
stamp
T=$b/bench/gpuqr_tester
run() { env "$@" timeout 60 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^geqrf ' "$w/t.txt" | awk '{printf "%s%s %s/%s=%s %s  ", $5, $2, $8, $11, $13, $NF}')"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2 3; do run GPUQR_AH_WARP=4; run GPUQR_AH_WARP=6; run GPUQR_AH_WARP=7; done
stamp
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelQrAhMatchesGeqr2OrDeclines*cuda_double' > "$w/san_racecheck.log" 2>&1; echo "racecheck rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$w/san_racecheck.log" | head -4
stamp
