#!/usr/bin/env bash
# Panel-kernel sensitivity: geqrf time against rows per block and inner width, plus the
# panel kernel's duration from Nsight Compute for two settings.  sweep_panel.sh OUTDIR [n]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:?}"; n="${2:-1024}"
t="${GPUQR_BUILD_DIR:-build-gpu}/bench/gpuqr_tester"
for inner in 32 16 8; do
  for rows in 64 128 256 512 1024; do
    printf "inner %2d rows %4d  " "$inner" "$rows"
    GPUQR_NB_INNER=$inner GPUQR_PANEL_ROWS=$rows "$t" --backend cuda --baseline cusolver --op geqrf \
      --precision d --dim "$n" --repeat 3 --no-check | grep -E "^geqrf" | awk '{print $8, $12, $14}'
  done
done
for rows in 128 1024; do
  GPUQR_PANEL_ROWS=$rows timeout 100 ncu --kernel-name regex:panel_kernel --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats "$t" --backend cuda --baseline cusolver --op geqrf \
    --precision d --dim "$n" --repeat 1 --warmup 0 --no-check 2>&1 | grep -E "Duration|Grid Size|Cluster Size  " | tr -s ' ' | paste -sd' ' | sed "s/^/rows $rows: /"
done
