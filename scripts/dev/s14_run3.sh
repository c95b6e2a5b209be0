#!/usr/bin/env bash
# Session 14, third call: one chunk (p <= 16) publishes V and tau without flags (a fill value
# no entry can take; strong loads until none is left); the chunked kernel's next rows of R
# copied before or after its flag (GPUQR_ADD_EARLY_FETCH=1/0, measured side by side); the
# acquire-poll knob of run 2 dropped (it measured the same). Tests, sanitizers, add bench,
# ncu stall reasons of the FP64 8000 x 7000 + 1500 rows kernel.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_update_bench
B=$b/bench/gpuqr_update_bench
F='*QrUpdateCudaTwins*:*QrUpdateTest*cuda*:*KernelTwins*Diagonal*'
for early in 0 1; do
  GPUQR_ADD_EARLY_FETCH=$early timeout 90 $b/tests/gpuqr_tests --gtest_filter="$F" > "$w/tests_update_early$early.log" 2>&1; echo "update tests early $early rc $?"
  grep -E "^\[  FAILED|PASSED" "$w/tests_update_early$early.log" | head; grep -B3 -A12 "Failure" "$w/tests_update_early$early.log" | head -30
done
stamp
timeout 150 $B --only add --repeat 2 > "$w/update_add.txt" 2>&1; echo "add bench rc $?"; cat "$w/update_add.txt"
stamp
GPUQR_ADD_EARLY_FETCH=1 timeout 90 $B --only add --precision 64 --repeat 2 > "$w/update_add_early1.txt" 2>&1; echo "add bench early 1 rc $?"; cat "$w/update_add_early1.txt"
stamp
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*QrUpdateCudaTwins.AddRowsSmallMatches*' > "$w/san_$tool.log" 2>&1; echo "$tool rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$w/san_$tool.log" | head -4
done
stamp
c=8000,7000,1500; tag=${c//,/_}
timeout 120 ncu --section WarpStateStats --section SourceCounters --section SpeedOfLight --section Occupancy --import-source no --kernel-name regex:add_rows_chained --launch-skip 1 --launch-count 1 -o "$w/prof_$tag" \
  $B --case $c --precision 64 --repeat 1 > "$w/ncu_$tag.log" 2>&1; echo "ncu $tag rc $?"; tail -1 "$w/ncu_$tag.log"
ncu -i "$w/prof_$tag.ncu-rep" --page details > "$w/details_$tag.txt" 2>&1
ncu -i "$w/prof_$tag.ncu-rep" --page source --csv --print-source sass > "$w/source_$tag.csv" 2>&1
grep -E "Duration|Achieved Occupancy|Warp Cycles Per Issued|Executed Ipc A|Compute \(SM\) Th|Memory Throughput" "$w/details_$tag.txt" | head -8
python3 scripts/dev/ncu_top.py "$w/source_$tag.csv" 30 | tee "$w/top_$tag.txt"
rm -f "$w/source_$tag.csv" "$w/prof_$tag.ncu-rep"
stamp
