#!/usr/bin/env bash
# Session 14, fourteenth call, on an H200: run 13's code (the L2 hint on), the add bench, and
# the FP64 part again with the hint off, side by side.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_update_bench
B=$b/bench/gpuqr_update_bench
timeout 150 $B --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
GPUQR_ADD_L2HINT=0 timeout 90 $B --only add --precision 64 --repeat 2 > "$w/update_add_hint0.txt" 2>&1; echo "add bench FP64 hint 0 rc $?"; grep -E " 1500 " "$w/update_add_hint0.txt"
stamp
