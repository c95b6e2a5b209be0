#!/usr/bin/env bash
# Session 5, first device call: every CUDA test (the two tests written after session 4's
# device budget included), the AH/single-block crossover around the new thresholds (224 / 320
# rows), the dense table, and where orgqr, gels and geqrf spend their time (ncu per-kernel
# sums against wall time), plus the tall-skinny R-only path's kernels.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tests gpuqr_panel_bench gpuqr_tester gpuqr_tsqr_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*cuda*:*Cuda*:*GramBasedPanels*:*TallInnerQr*' > "$w/tests.log" 2>&1; echo "cuda tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran|SKIPPED \]" "$w/tests.log" | head -20; grep -B3 -A12 "Failure" "$w/tests.log" | head -60
echo "t $(( $(date +%s) - s )) s"
timeout 60 $b/bench/gpuqr_panel_bench --h 128,192,224,256,288,320,352,384,448,512 --b 32 --precision d,s --repeat 20 > "$w/panel_bench.txt" 2>&1; echo "panel rc $?"; cat "$w/panel_bench.txt"
timeout 150 $b/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 --json "$w/bench_checked.jsonl" > "$w/bench_checked.txt" 2>&1; echo "tester rc $?"
grep -E "geqrf|orgqr|gels" "$w/bench_checked.txt" | head -20
echo "t $(( $(date +%s) - s )) s"
for c in "orgqr 4096 d" "gels 4096 d" "geqrf 1024 d" "orgqr 1024 d"; do
  set -- $c
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --csv $b/bench/gpuqr_tester --backend cuda --baseline none --op $1 --precision $3 --dim $2 --repeat 1 --warmup 1 --no-check > "$w/ncu_$1_$2.csv" 2> "$w/ncu_$1_$2.err"
  echo "== ncu $c (warmup + 1 timed run: halve the counts)"; python3 scripts/ncu_summary.py "$w/ncu_$1_$2.csv" 14
done
timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --csv $b/bench/gpuqr_tsqr_bench --m 1048576 --n 64 --methods automatic --forms rb,explicit --precision d --repeat 1 > "$w/ncu_tsqr.csv" 2> "$w/ncu_tsqr.err"
echo "== ncu tsqr 1048576x64 d rb,explicit"; python3 scripts/ncu_summary.py "$w/ncu_tsqr.csv" 20
echo "t $(( $(date +%s) - s )) s"
