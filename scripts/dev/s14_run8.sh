#!/usr/bin/env bash
# Session 14, eighth call: ncu of the one-chunk add kernel, FP64 8000 x 3000 + 16 rows (19.6x,
# target 20x): stall reasons by SASS line, the polls left out, to find where the chain of
# tiles spends its time.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_update_bench
B=$b/bench/gpuqr_update_bench
for c in 8000,3000,16 8000,3000,1; do
  tag=${c//,/_}
  timeout 120 ncu --section WarpStateStats --section SourceCounters --section SpeedOfLight --import-source no --kernel-name regex:add_rows_chained --launch-skip 3 --launch-count 1 -o "$w/prof_$tag" \
    $B --case $c --precision 64 --repeat 1 > "$w/ncu_$tag.log" 2>&1; echo "ncu $tag rc $?"; tail -1 "$w/ncu_$tag.log"
  ncu -i "$w/prof_$tag.ncu-rep" --page details > "$w/details_$tag.txt" 2>&1
  ncu -i "$w/prof_$tag.ncu-rep" --page source --csv --print-source sass > "$w/source_$tag.csv" 2>&1
  grep -E "Duration|Warp Cycles Per Issued|Executed Ipc A" "$w/details_$tag.txt" | head -4
  python3 scripts/dev/ncu_top.py "$w/source_$tag.csv" 70 > "$w/top_$tag.txt"; head -3 "$w/top_$tag.txt"
  grep -v -E "LDG.E.STRONG|ISETP.NE.AND P[0-9], PT, R[0-9]+, RZ|BRA" "$w/top_$tag.txt" | sed -n 4,60p
  gzip -f "$w/source_$tag.csv"; rm -f "$w/prof_$tag.ncu-rep"
  stamp
done
