#!/usr/bin/env bash
# Session 34 run 3 (and runs 4 and 8, which call it): the shadow warps (mode 10) and the warps past them meet barrier 2 as many
# times as the four working warps meet barrier 1 (racecheck lost the barriers' order without
# it: runs 1 and 2). In one call: racecheck of one AH panel (FP64 and FP32, 256 rows; FP64
# 1024 rows) in mode 10, the AH twin tests, the tester alternated twice between modes 7 and
# 10, geqrf FP64 1024 in three more processes, then every CUDA test as time allows.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_panel_bench
T=$b/tests/gpuqr_tests
P=$b/bench/gpuqr_panel_bench
rc() {  # name, args...
  local n=$1; shift
  GPUQR_AH_WARP=10 timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $P --trace 1 "$@" > "$out/racecheck_$n.log" 2>&1
  echo "racecheck $n rc $?: $(grep -E "SUMMARY" "$out/racecheck_$n.log")"
}
rc d256 --h 256 --precision d; rc s256 --h 256 --precision s; rc d1024 --h 1024 --precision d
stamp
F='*KernelTwins*PanelQrAh*cuda*:*KernelTwins*PanelQrUpdateStep*cuda*'
timeout 120 $T --gtest_filter="$F" > "$w/tests1.log" 2>&1; echo "twin tests rc $?"
grep -E "^\[  FAILED|PASSED" "$w/tests1.log" | head; cp "$w/tests1.log" "$out/"
for m in 7 10; do GPUQR_AH_WARP=$m timeout 30 $P --trace 1 --h 1024 --precision d,s 2>&1 | sed "s/^/[warp $m] /"; done
X=$b/bench/gpuqr_tester
run() { env "$@" timeout 60 $X --backend cuda --baseline cusolver --graph both --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 7 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^(geqrf|orgqr|gels) ' "$w/t.txt" | awk '{printf "%s:%s%s %s/%s=%s g %s=%s %s  ", $1, $5, $2, $8, $11, $13, $14, $15, $NF}')"; echo "== $*" >> "$out/tester_ab.txt"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2; do run GPUQR_AH_WARP=7; run GPUQR_AH_WARP=10; done
for r in 1 2 3; do timeout 40 $X --backend cuda --baseline cusolver --graph both --op geqrf --precision d --dim 1024 --repeat 20 --warmup 3 > "$w/t1.txt" 2>&1; grep -E "^geqrf " "$w/t1.txt" | sed "s/^/[1024 process $r] /"; cat "$w/t1.txt" >> "$out/tester_1024.txt"; done
stamp
full_suite "${SUITE_BUDGET:-590}"
stamp
