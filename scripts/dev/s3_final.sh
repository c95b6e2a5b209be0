#!/usr/bin/env bash
# Session 3's full device run: gpu_check (build, every test, sanitizers, the dense benchmark
# against cuSOLVER), then the panel kernels alone and adding rows with and without the
# single-block kernel.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; b=build-gpu
bash scripts/gpu_check.sh "$out" full > "$out/gpu_check.txt" 2>&1; echo "gpu_check rc $?"
grep -E "build:|PASSED|FAILED|ERROR SUMMARY|gpu_check:" "$out/gpu_check.txt" | head -20
grep -E "^(geqrf|orgqr|gels)" "$out/gpu_check.txt" | awk '{print $1,$2,$3,$5,$7,$10,$12}'
$b/bench/gpuqr_panel_bench --h 32,64,128,256,512,640,1024 --b 32 --repeat 30 | tee "$out/panel_bench.txt"
for single in 0 1; do
  GPUQR_PANEL_SINGLE=$single timeout 60 $b/bench/gpuqr_update_bench --only add --repeat 2 --quick > "$out/update_add_single$single.txt" 2>&1
  echo "single=$single"; tail -2 "$out/update_add_single$single.txt"
done
