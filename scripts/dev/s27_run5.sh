#!/usr/bin/env bash
# Session 27, fifth call (final code, warm build): where geqrf 1024 FP64's kernel time goes
# (ncu, base clocks), with the AH scaling by four lanes a row (default) and by one
# (GPUQR_AH_SCALE_LANES=1).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tester
T=$b/bench/gpuqr_tester
for lanes in 4 1; do
  GPUQR_AH_SCALE_LANES=$lanes timeout 60 ncu --metrics gpu__time_duration.sum --csv $T --backend cuda --baseline none --op geqrf --precision d --dim 1024 --repeat 1 --warmup 0 --no-check > "$w/ncu$lanes.csv" 2>&1; echo "ncu lanes=$lanes rc $?"
  gzip -c "$w/ncu$lanes.csv" > "$out/ncu_geqrf1024_lanes$lanes.csv.gz"
  python3 scripts/dev/ncu_by_name.py "$w/ncu$lanes.csv" 10
done
stamp
