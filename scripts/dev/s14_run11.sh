#!/usr/bin/env bash
# Session 14, eleventh call, on an H100 (runs 1-10 ran on an H200): the add bench of run 10's
# code, to see whether the targets hold on the other card (session 13's numbers were H100's).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_update_bench
B=$b/bench/gpuqr_update_bench
timeout 150 $B --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
