#!/usr/bin/env bash
# Session 29, run 5: where the host's time goes in geqrf 1024 (gpuqr_host_profile: host time
# to return and to finish per call, SIGPROF stack samples), with graphs for reference; then
# the outer block with the faster panel at 1024-4096 (GPUQR_NB_OUTER), alternated.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tester gpuqr_host_profile
H=$b/bench/gpuqr_host_profile
timeout 120 $H 1024 200 d 0 > "$out/host_profile_d.txt" 2>&1; echo "rc $?"; head -1 "$out/host_profile_d.txt"
timeout 120 $H 1024 200 s 0 > "$out/host_profile_s.txt" 2>&1; echo "rc $?"; head -1 "$out/host_profile_s.txt"
timeout 120 $H 1024 100 d 1 > "$out/host_profile_d_graph.txt" 2>&1; echo "rc $?"; head -1 "$out/host_profile_d_graph.txt"
sed -n '2,400p' "$out/host_profile_d.txt" | cut -c1-170 | head -150
stamp
X=$b/bench/gpuqr_tester
run() { env "$@" timeout 90 $X --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^geqrf ' "$w/t.txt" | awk '{printf "%s%s %s/%s=%s %s  ", $5, $2, $8, $11, $13, $NF}')"; cat "$w/t.txt" >> "$out/tester_nb.txt"; }
for r in 1 2; do for nb in 128 192 256; do run GPUQR_NB_OUTER=$nb; done; done
stamp
