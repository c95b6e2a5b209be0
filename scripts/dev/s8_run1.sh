#!/usr/bin/env bash
# Session 8, first call (no code change since session 7): the tall-skinny grid of issue 4 in
# both precisions (m = 2^18, 2^20, 2^22; n = 16 .. 1024; every form) against cuSOLVER in the
# same run, and per-kernel times (ncu) of geqrf 1024 (issue 3) and of tall-skinny R at n = 32.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_tester gpuqr_tsqr_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
TS=$b/bench/gpuqr_tsqr_bench
timeout 150 $TS --m 1048576 --n 16,32,64,128,256,512,1024 --precision d,s --methods automatic --forms r,rb,explicit,geqrf --repeat 5 --json "$w/tsqr_m20.jsonl" > "$w/tsqr_m20.txt" 2>&1; echo "tsqr m20 rc $?"
grep -vE "^#|^$" "$w/tsqr_m20.txt" | head -64
echo "t $(( $(date +%s) - s )) s"
timeout 120 $TS --m 4194304 --n 16,32,64,128 --precision d,s --methods automatic --forms r,rb,explicit,geqrf --repeat 3 --json "$w/tsqr_m22.jsonl" > "$w/tsqr_m22.txt" 2>&1; echo "tsqr m22 rc $?"
grep -vE "^#|^$" "$w/tsqr_m22.txt" | head -40
echo "t $(( $(date +%s) - s )) s"
timeout 60 $TS --m 262144 --n 256,512,1024 --precision d,s --methods automatic --forms r,rb,explicit,geqrf --repeat 3 --json "$w/tsqr_m18.jsonl" > "$w/tsqr_m18.txt" 2>&1; echo "tsqr m18 rc $?"
grep -vE "^#|^$" "$w/tsqr_m18.txt" | head -30
echo "t $(( $(date +%s) - s )) s"
GPUQR_BUILD_DIR=$b timeout 60 bash scripts/profile_geqrf.sh "$w/prof1024" 1024 d 2>&1 | head -34
echo "t $(( $(date +%s) - s )) s"
timeout 40 ncu --metrics gpu__time_duration.sum --csv $TS --m 1048576 --n 32 --precision d --methods automatic --forms rb --repeat 1 > "$w/ncu_tsqr32.csv" 2> "$w/ncu_tsqr32.err"; echo "ncu tsqr rc $?"
python3 scripts/ncu_summary.py "$w/ncu_tsqr32.csv" 2>&1 | head -30
