#!/usr/bin/env bash
# Session 14, first call: ncu of the chained add kernel, FP64, where the two short targets
# are (8000 x 7000 + 1500 rows: the chunked kernel; 8000 x 3000 + 16 rows: one chunk):
# stall reasons and the SASS lines with the most stall samples. Then the add bench (FP64).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_update_bench
B=$b/bench/gpuqr_update_bench
for c in 8000,7000,1500 8000,3000,16; do
  tag=${c//,/_}
  timeout 150 ncu --set full --import-source no --kernel-name regex:add_rows_chained --launch-skip 1 --launch-count 1 -o "$w/prof_$tag" \
    $B --case $c --precision 64 --repeat 1 > "$w/ncu_$tag.log" 2>&1; echo "ncu $tag rc $?"; tail -2 "$w/ncu_$tag.log"
  ncu -i "$w/prof_$tag.ncu-rep" --page details > "$w/details_$tag.txt" 2>&1
  ncu -i "$w/prof_$tag.ncu-rep" --page source --csv --print-source sass > "$w/source_$tag.csv" 2>&1
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occ|Warp Cycles Per Issued|Executed Ipc A|Memory Throughput|DRAM Throughput|L2 Hit|L1/TEX Hit|Compute \(SM\) Th|Stall|stall" "$w/details_$tag.txt" | head -40
  python3 scripts/dev/ncu_top.py "$w/source_$tag.csv" 45 | tee "$w/top_$tag.txt"
  rm -f "$w/source_$tag.csv"
  stamp
done
timeout 120 $B --only add --precision 64 --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
