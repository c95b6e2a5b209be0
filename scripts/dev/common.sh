#!/usr/bin/env bash
# Sourced by the device-session scripts (s13_run*.sh on) with the build targets as arguments:
# logs go to $OUT/w and are archived to $OUT/logs.tgz on exit; the carried SuiteSparse
# (.carry-suitesparse) is on the library path, the carried CUTLASS headers (.carry-cutlass)
# are used when present; the device's name, then a Release build with
# CUDA in build-gpu of the targets named. Leaves $w (the log folder), $b (the build folder)
# and stamp (prints the seconds since the start).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; rm -rf "$w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
stamp() { echo "t $(( $(date +%s) - s )) s"; }
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cut=(); [ -d .carry-cutlass/include ] && cut=(-DGPUQR_CUTLASS_DIR=$PWD/.carry-cutlass)  # carried CUTLASS headers
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss "${cut[@]}" > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target "$@" > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
grep -E "gpuqr: CUTLASS" "$w/configure.log"
echo "build $(( $(date +%s) - s )) s"
