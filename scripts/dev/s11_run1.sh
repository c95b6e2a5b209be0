#!/usr/bin/env bash
# Session 11, first call: the rows kernel's variants for 64 x 16 (how the next matrix is
# fetched: GPUQR_BATCHED_ROWS_STAGE 0..3; the larfg inputs from the previous step:
# GPUQR_BATCHED_ROWS_DOWNDATE 0/1), 1 GiB against cuBLAS in the same run; ncu DRAM bytes of
# stages 0, 1, 2; the variants' tests.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_batched_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
B=$b/bench/gpuqr_batched_bench
for v in "0 0" "0 1" "1 0" "2 0" "2 1" "3 0" "3 1" "0 0"; do
  set -- $v
  GPUQR_BATCHED_ROWS_STAGE=$1 GPUQR_BATCHED_ROWS_DOWNDATE=$2 timeout 60 $B --n 16 --shape tall --precision both --gib 1 --no-variable > "$w/rows_s$1_d$2.txt" 2>&1; echo "== stage $1 downdate $2 rc $?"; grep -E "64x16 " "$w/rows_s$1_d$2.txt" | cut -c1-120
done
echo "t $(( $(date +%s) - s )) s"
for st in 0 1 2; do
  GPUQR_BATCHED_ROWS_STAGE=$st timeout 60 ncu --kernel-name regex:rows_direct --launch-count 1 --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,sm__cycles_elapsed.avg.per_second $B --n 16 --shape tall --precision double --gib 0.25 --no-baseline --no-variable --repeat 1 > "$w/ncu_s$st.txt" 2>&1; echo "== ncu stage $st rc $?"; grep -E "dram__|duration|lts__|per_second" "$w/ncu_s$st.txt"
done
echo "t $(( $(date +%s) - s )) s"
timeout 200 $b/tests/gpuqr_tests --gtest_filter='*BatchedSmallCuda*RowsKernel*:*BatchedSmallCuda*TallClasses*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|^\[       OK" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -60
echo "t $(( $(date +%s) - s )) s"
