#!/usr/bin/env bash
# Session 31, main's final code (T beside the scaling in a kernel of its own; graphs on by
# default from a key's second call): the tester in the default mode (timed calls are
# replays) and with graphs off (--graph both: time_ms off, graph_ms the default's replays).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tester
timeout 100 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --graph both --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$out/tester_final.txt" 2>&1; echo "tester rc $?"
grep -E "^(op|geqrf|orgqr|gels) " "$out/tester_final.txt"
stamp
