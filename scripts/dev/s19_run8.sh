#!/usr/bin/env bash
# Session 19, run 8: run 7's CLI checks and demo solve again (run 7 named the tool's binary
# wrong: it is tools/gpuqr), on the same code.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_cli
timeout 60 bash tests/test_cli.sh $b/tools/gpuqr . > "$w/cli.log" 2>&1; echo "cli rc $?"; tail -3 "$w/cli.log"
timeout 30 $b/tools/gpuqr lstsq data/matrices/ash219.mtx > "$w/demo.txt" 2>&1; echo "demo rc $?"; head -30 "$w/demo.txt"
