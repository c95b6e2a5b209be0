#!/usr/bin/env bash
# Session 29, run 8: the outer block 256 (default now on square and wide calls) against 128 on
# shapes between the measured ones (2048 x 1024, 1024 x 2048, 1536 x 1536; 3072 x 1024 is
# tall and keeps 128 either way, a control), geqrf and gels, alternated; then memcheck on the
# AH step's twin test (racecheck timed out in runs 3-4).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
X=$b/bench/gpuqr_tester
run() { env "$@" timeout 90 $X --backend cuda --baseline cusolver --op geqrf,gels --precision d,s --dim 2048x1024,1024x2048,1536,3072x1024 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^(geqrf|gels) ' "$w/t.txt" | awk '{printf "%s %s%sx%s %s/%s=%s %s\n", $1, $5, $2, $3, $8, $11, $13, $NF}')"; cat "$w/t.txt" >> "$out/tester_nb.txt"; }
for r in 1 2; do run GPUQR_NB_OUTER=128; run GPUQR_NB_OUTER=256; done
stamp
GPUQR_AH_STEP=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelQrUpdateStep*cuda_double' > "$w/san_memcheck.log" 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/san_memcheck.log" | head -4
stamp
