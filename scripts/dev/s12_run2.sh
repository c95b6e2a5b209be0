#!/usr/bin/env bash
# Session 12, second call: ncu on the few-rows add kernel (p = 4 and 16, FP64, 8000 x 3000):
# where its time goes, per SASS instruction (stall samples).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; rm -rf "$w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_update_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
for skip in 2 4; do
  timeout 200 ncu --set full --kernel-name regex:add_rows_small --launch-skip $skip --launch-count 1 -o "$w/prof$skip" \
    $b/bench/gpuqr_update_bench --only add --pmax 16 --precision 64 --repeat 1 > "$w/ncu$skip.log" 2>&1; echo "ncu $skip rc $?"; tail -3 "$w/ncu$skip.log"
  ncu -i "$w/prof$skip.ncu-rep" --page details > "$w/details$skip.txt" 2>&1
  ncu -i "$w/prof$skip.ncu-rep" --page source --csv --print-source sass > "$w/source$skip.csv" 2>&1
  grep -E "Duration|Registers|Achieved Occupancy|Warp Cycles Per Issued|Executed Ipc A" "$w/details$skip.txt" | head -8
  echo "t $(( $(date +%s) - s )) s"
done
