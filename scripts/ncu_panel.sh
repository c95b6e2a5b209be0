#!/usr/bin/env bash
# Nsight Compute's detail for one launch of the panel kernel inside a GPU geqrf (stall
# reasons, throughput). Needs the build of scripts/gpu_check.sh.   ncu_panel.sh OUTDIR [n]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:?usage: ncu_panel.sh OUTDIR [n]}"; n="${2:-1024}"
build_dir="${GPUQR_BUILD_DIR:-build-gpu}"
cmake --build "$build_dir" --parallel "$(nproc)" --target gpuqr_tester > /dev/null 2>&1 || exit 1
timeout 200 ncu --kernel-name regex:panel_kernel --launch-skip 2 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy \
  --section SchedulerStats "$build_dir/bench/gpuqr_tester" --backend cuda --baseline cusolver \
  --op geqrf --precision d --dim "$n" --repeat 1 --warmup 0 --no-check > "$out/ncu_panel.txt" 2>&1
grep -vE "^==PROF==|^    -----" "$out/ncu_panel.txt" | grep -E "Duration|Throughput|Stall|Warp Cycles|Issued|Active|Registers|Shared|Block Size|Grid Size|Cluster|Eligible|No Eligible|Theoretical|Achieved" | head -60
