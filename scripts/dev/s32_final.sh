#!/usr/bin/env bash
# Session 32, run 3 (branch ah-read): the b x b kernel's reads of the Gram partials
# (GPUQR_AH_WIDE_READ 0: four at a time; 1: eight, the top block first; 2, the default: also
# only their upper triangles, mirrored). In one call: the b x b kernel's phases in each mode,
# the tester (geqrf, graphs off and on) alternated twice among them, then every CUDA test but
# GramTf32.WideGramWithinFp32Bounds (CPU-bound, untouched) in the default mode.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_panel_bench
P=$b/bench/gpuqr_panel_bench
for m in 0 1 2; do for h in 256 1024 8192; do GPUQR_AH_WIDE_READ=$m timeout 30 $P --trace 1 --h $h --precision d,s 2>&1 | sed "s/^/[read $m] /"; done; done
X=$b/bench/gpuqr_tester
run() { env "$@" timeout 60 $X --backend cuda --baseline cusolver --graph both --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 7 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^(geqrf|orgqr|gels) ' "$w/t.txt" | awk '{printf "%s:%s%s %s/%s=%s g %s=%s %s  ", $1, $5, $2, $8, $11, $13, $14, $15, $NF}')"; echo "== $*" >> "$out/tester_ab.txt"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2; do run GPUQR_AH_WIDE_READ=0; run GPUQR_AH_WIDE_READ=2; run GPUQR_AH_WIDE_READ=1; done
stamp
left=$(( 585 - ($(date +%s) - s) ))
timeout $left $b/tests/gpuqr_tests --gtest_filter='-*cpu*:*WideGramWithinFp32Bounds*' > "$w/tests.log" 2>&1; echo "tests rc $? (limit $left s)"
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
grep -E "^\[ *(OK|FAILED) .*ReadsOfTheGram" "$w/tests.log"
tail -3 "$w/tests.log" | cut -c1-200
cp "$w/tests.log" "$out/"
stamp
