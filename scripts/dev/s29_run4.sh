#!/usr/bin/env bash
# Session 29, run 4: how much of geqrf 1024's time is the host's (ours with and without CUDA
# graph replay beside cuSOLVER, `--graph both`), the outer block re-measured with the faster
# panel (GPUQR_NB_OUTER), and racecheck on the AH step's twin test (run 3 timed out at 150 s).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
X=$b/bench/gpuqr_tester
for r in 1 2; do
  timeout 120 $X --backend cuda --baseline cusolver --graph both --op geqrf,gels --precision d,s --dim 1024,2048 --repeat 5 --warmup 2 > "$w/graph_$r.txt" 2>&1
  echo "graph both, pass $r:"; grep -E "^(op|geqrf|gels) " "$w/graph_$r.txt"; cat "$w/graph_$r.txt" >> "$out/tester_graph.txt"
done
stamp
run() { env "$@" timeout 60 $X --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^geqrf ' "$w/t.txt" | awk '{printf "%s%s %s/%s=%s %s  ", $5, $2, $8, $11, $13, $NF}')"; cat "$w/t.txt" >> "$out/tester_nb.txt"; }
for r in 1 2; do for nb in 96 128 192; do run GPUQR_NB_OUTER=$nb; done; done
stamp
timeout 220 compute-sanitizer --tool racecheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelQrUpdateStep*cuda_double' > "$w/san_racecheck.log" 2>&1; echo "racecheck rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED|Race" "$w/san_racecheck.log" | head -6
stamp
