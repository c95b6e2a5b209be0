#!/usr/bin/env bash
# Session 34 run 8: run 3's steps (s34_run3.sh) on the final code (every read the shadows
# make of their selected buffers by load_shared_exact), the full suite within 400 s.
SUITE_BUDGET=400 exec bash "$(dirname "${BASH_SOURCE[0]}")/s34_run3.sh"
