#!/usr/bin/env bash
# Session 34 run 6: the final code's table (issue 3's small shapes, run 4 of session 33's
# command) and geqrf FP64 1024 alone in five more processes.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tester
X=$b/bench/gpuqr_tester
timeout 100 $X --backend cuda --baseline cusolver --graph both --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$out/tester_small.txt" 2>&1; echo "small rc $?"
grep -E "^(geqrf|orgqr|gels) " "$out/tester_small.txt"
for r in 1 2 3 4 5; do timeout 40 $X --backend cuda --baseline cusolver --graph both --op geqrf --precision d --dim 1024 --repeat 20 --warmup 3 > "$w/t1.txt" 2>&1; grep -E "^geqrf " "$w/t1.txt" | sed "s/^/[1024 process $r] /"; cat "$w/t1.txt" >> "$out/tester_1024.txt"; done
stamp
