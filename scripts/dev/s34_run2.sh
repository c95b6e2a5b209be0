#!/usr/bin/env bash
# Session 34 run 2: (1) racecheck on scripts/dev/racecheck_probe.cu's three variants (does the
# tool follow a named barrier met by part of the block? built here into .carry-bin), then
# (2) issue 3's whole shape list and issue 4's 2^22 x 1024 on main (s34_shapes.sh).
P=.carry-bin/racecheck_probe
for v in 0 1 2; do
  timeout 60 compute-sanitizer --tool racecheck $P $v > "$OUT/probe_v$v.log" 2>&1
  echo "probe variant $v rc $?: $(grep -E 'variant|SUMMARY' "$OUT/probe_v$v.log" | tr '\n' ' ')"
done
exec bash scripts/dev/s34_shapes.sh
