#!/usr/bin/env bash
# Session 4, first device call: the deletion-rotation ring (issue 5) and the tall inner QR of
# the update objects (issues 5/6) tested and measured, and the single-block panel kernel
# profiled (issue 3). Logs under $OUT.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; b=build-gpu; s=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee "$out/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_update_bench gpuqr_update_columns_bench gpuqr_panel_bench gpuqr_tsqr_bench > "$out/build.log" 2>&1 || { grep -E "error" -A5 "$out/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*QrUpdate*cuda*:*UpdateTwins*:*update*cuda*:*Update*Cuda*:*DeletionRotations*' > "$out/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$out/tests.log" | head; grep -B2 -A8 "Failure" "$out/tests.log" | head -30
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*DeletionRotationsMatch*' > "$out/racecheck.log" 2>&1; echo "racecheck rc $?"; tail -3 "$out/racecheck.log"
echo "t $(( $(date +%s) - s )) s"
timeout 150 $b/bench/gpuqr_update_bench --only remove --repeat 1 > "$out/remove.txt" 2>&1
echo "remove rc $?"; grep -E "^remove" "$out/remove.txt" | awk '{print $2,$3,$4,$5,$6,$7,$8,$9,$10}'
echo "t $(( $(date +%s) - s )) s"
for tall in 0 1; do
  GPUQR_TALL_INNER_QR=$tall timeout 100 $b/bench/gpuqr_update_columns_bench --only add-end --repeat 2 > "$out/add_end_tall$tall.txt" 2>&1
  echo "tall=$tall rc $?"; cat "$out/add_end_tall$tall.txt" | tail -n +2
done
echo "t $(( $(date +%s) - s )) s"
timeout 60 $b/bench/gpuqr_tsqr_bench --m 9000,6000 --n 200,100 --precision d --methods automatic,householder --repeat 3 > "$out/tsqr_small.txt" 2>&1; echo "tsqr rc $?"; tail -12 "$out/tsqr_small.txt"
echo "t $(( $(date +%s) - s )) s"
for h in 512 64; do
  timeout 120 ncu --clock-control none --kernel-name regex:panel_single --launch-skip 3 --launch-count 1 --set full --import-source no \
    -o "$out/panel$h" $b/bench/gpuqr_panel_bench --h $h --b 32 --precision d --repeat 5 > "$out/ncu$h.log" 2>&1; echo "ncu $h rc $?"
  ncu -i "$out/panel$h.ncu-rep" --page source --csv --print-source sass > "$out/panel${h}_sass.csv" 2> "$out/panel${h}_sass.err"; echo "sass rc $? $(wc -l < "$out/panel${h}_sass.csv")"
  ncu -i "$out/panel$h.ncu-rep" --page details --section WarpStateStats --section InstructionStats --section SchedulerStats > "$out/panel${h}_details.txt" 2>&1
done
echo "total $(( $(date +%s) - s )) s"
