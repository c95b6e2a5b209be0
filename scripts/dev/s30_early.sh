#!/usr/bin/env bash
# Session 30, run 5: PDL's launch_dependents before griddepcontrol.wait (GPUQR_PDL_EARLY=1)
# against after it (the default): the twin, dense, blocked and graph tests both ways, the
# tester (geqrf, orgqr, gels against cuSOLVER) alternated twice, graph replay with it on.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
T=$b/tests/gpuqr_tests
for e in 0 1; do
  GPUQR_PDL_EARLY=$e timeout 120 $T --gtest_filter='*KernelTwins*cuda*:*Dense.*cuda*:*BlockedQR.*cuda*:*CudaGraphReplay.*cuda*' > "$w/tests_early$e.log" 2>&1; echo "tests early $e rc $?"
  grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests_early$e.log" | head; grep -B3 -A12 "Failure" "$w/tests_early$e.log" | head -30
  cp "$w/tests_early$e.log" "$out/"
done
stamp
X=$b/bench/gpuqr_tester
run() { env "$@" timeout 90 $X --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^(geqrf|orgqr|gels) ' "$w/t.txt" | awk '{printf "%s:%s%s %s/%s=%s %s  ", $1, $5, $2, $8, $11, $13, $NF}')"; echo "== $*" >> "$out/tester_ab.txt"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2; do run GPUQR_PDL_EARLY=0; run GPUQR_PDL_EARLY=1; done
stamp
GPUQR_PDL_EARLY=1 timeout 40 $X --backend cuda --baseline cusolver --graph both --op geqrf,gels --precision d,s --dim 1024,4096 --repeat 5 --warmup 2 > "$out/tester_graph.txt" 2>&1; echo "graph tester rc $?"
grep -E "^(op|geqrf|gels) " "$out/tester_graph.txt"
stamp
