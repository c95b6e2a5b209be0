#!/usr/bin/env bash
# Session 34 run 5: the finite scan's flag in pinned, mapped host memory (no memset, no copy
# back; run 4b measured the scan at ~30 us of geqrf FP64 1024's 1.37 ms on an H200). In one
# call: the tester of run 4 (.carry-bin/tester_run4.xz) and this one alternated three times
# (geqrf, graphs both, 1024-4096, both precisions; gels 1024), then the bad-input tests, then
# every CUDA test as time allows.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_panel_bench
T=$b/tests/gpuqr_tests
xz -dc .carry-bin/tester_run4.xz > "$w/tester_old" && chmod +x "$w/tester_old"
run() {  # label binary
  timeout 60 $2 --backend cuda --baseline cusolver --graph both --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 10 --warmup 3 > "$w/t.txt" 2>&1
  timeout 30 $2 --backend cuda --baseline cusolver --graph both --op gels --precision d,s --dim 1024 --repeat 10 --warmup 3 >> "$w/t.txt" 2>&1
  echo "[$1] $(grep -E '^(geqrf|gels) ' "$w/t.txt" | awk '{printf "%s:%s%s %s/%s=%s g %s=%s %s  ", $1, $5, $2, $8, $11, $13, $14, $15, $NF}')"
  echo "== $1" >> "$out/tester_ab.txt"; cat "$w/t.txt" >> "$out/tester_ab.txt"
}
for r in 1 2 3; do run run4 "$w/tester_old"; run mapped $b/bench/gpuqr_tester; done
stamp
timeout 120 $T --gtest_filter='*BadInput*cuda*:*Finite*cuda*:*NaN*cuda*:*Dense*cuda*' > "$w/tests1.log" 2>&1; echo "bad-input tests rc $?"
grep -E "^\[  FAILED|PASSED" "$w/tests1.log" | head; cp "$w/tests1.log" "$out/"
stamp
full_suite "${SUITE_BUDGET:-590}"
stamp
