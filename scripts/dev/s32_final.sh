#!/usr/bin/env bash
# Session 32, runs 3 and 4 (branch ah-read): the b x b kernel's reads of the Gram partials
# (GPUQR_AH_WIDE_READ 0: four at a time; 1: eight, the top block's loads first; 2: as 1, only
# their upper triangles, mirrored; 3, the default: as 1, sixteen at a time). Run 3 compared
# modes 0, 1, 2 (default 2 then); this script, run 4: in one call, the b x b kernel's phases
# in modes 0, 1, 3, the tester (geqrf, graphs off and on) alternated twice between 1 and 3,
# every CUDA test but GramTf32.WideGramWithinFp32Bounds (CPU-bound, untouched) in the default
# mode, then the tester's geqrf, orgqr and gels in the default mode.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_panel_bench
P=$b/bench/gpuqr_panel_bench
for m in 0 1 3; do for h in 256 1024 4096; do GPUQR_AH_WIDE_READ=$m timeout 30 $P --trace 1 --h $h --precision d,s 2>&1 | sed "s/^/[read $m] /"; done; done
X=$b/bench/gpuqr_tester
run() { env "$@" timeout 60 $X --backend cuda --baseline cusolver --graph both --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 7 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^(geqrf|orgqr|gels) ' "$w/t.txt" | awk '{printf "%s:%s%s %s/%s=%s g %s=%s %s  ", $1, $5, $2, $8, $11, $13, $14, $15, $NF}')"; echo "== $*" >> "$out/tester_ab.txt"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2; do run GPUQR_AH_WIDE_READ=1; run GPUQR_AH_WIDE_READ=3; done
stamp
left=$(( 540 - ($(date +%s) - s) ))
timeout $left $b/tests/gpuqr_tests --gtest_filter='-*cpu*:*WideGramWithinFp32Bounds*' > "$w/tests.log" 2>&1; echo "tests rc $? (limit $left s)"
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
grep -E "^\[ *(OK|FAILED) .*ReadsOfTheGram" "$w/tests.log"
cp "$w/tests.log" "$out/"
stamp
left=$(( 590 - ($(date +%s) - s) ))
timeout $left $X --backend cuda --baseline cusolver --graph both --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$out/tester_final.txt" 2>&1; echo "tester rc $?"
grep -E "^(op|geqrf|orgqr|gels) " "$out/tester_final.txt"
stamp
