#!/usr/bin/env bash
# Session 35 run 6: run 5 with a third default call at 2^22 (asked for an H200; the warm H100
# of run 5 ran it).
EXTRA_DEFAULT=1 exec bash "$(dirname "${BASH_SOURCE[0]}")/s35_run5.sh"
