#!/usr/bin/env bash
# Where the time of a GPU geqrf goes: per-kernel times from Nsight Compute for one
# factorization, then a sweep of the block sizes. Needs the build of scripts/gpu_check.sh.
#
#   bash scripts/profile_geqrf.sh OUTDIR [n] [precision d|s]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:?usage: profile_geqrf.sh OUTDIR [n] [d|s]}"
n="${2:-1024}"
prec="${3:-d}"
mkdir -p "$out"
build_dir="${GPUQR_BUILD_DIR:-build-gpu}"
cmake --build "$build_dir" --parallel "$(nproc)" --target gpuqr_tester > "$out/build_profile.log" 2>&1 \
  || { grep error -A5 "$out/build_profile.log" | head -40; exit 1; }
tester="$build_dir/bench/gpuqr_tester"

if command -v ncu >/dev/null 2>&1; then
  timeout 240 ncu --metrics gpu__time_duration.sum --csv \
    "$tester" --backend cuda --baseline cusolver --op geqrf --precision "$prec" --dim "$n" \
    --repeat 1 --warmup 0 --no-check > "$out/ncu_$n.csv" 2> "$out/ncu_$n.err"
  python3 - "$out/ncu_$n.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; rows = rows[1:]
ki = head.index("Kernel Name"); vi = head.index("Metric Value"); ui = head.index("Metric Unit")
tot = collections.defaultdict(float); cnt = collections.Counter(); order = []
for r in rows:
    name = r[ki][:70]
    v = float(r[vi].replace(",", ""))
    if r[ui] == "nsecond": v /= 1e3
    elif r[ui] == "msecond": v *= 1e3
    if name not in tot: order.append(name)
    tot[name] += v; cnt[name] += 1
print(f"{'kernel':70s} {'calls':>6s} {'total_us':>10s} {'avg_us':>8s}")
for name in sorted(tot, key=lambda k: -tot[k])[:30]:
    print(f"{name:70s} {cnt[name]:6d} {tot[name]:10.1f} {tot[name]/cnt[name]:8.2f}")
print("sum of kernel time (us):", round(sum(tot.values()), 1), " kernels:", sum(cnt.values()))
PY
fi

for nb in 64 128 256; do
  for rows in 128 512; do
    echo "== GPUQR_NB_OUTER=$nb GPUQR_PANEL_ROWS=$rows"
    GPUQR_NB_OUTER=$nb GPUQR_PANEL_ROWS=$rows "$tester" --backend cuda --baseline cusolver \
      --op geqrf --precision "$prec" --dim "$n,4096" --repeat 3 --warmup 1 --no-check 2>&1 \
      | grep -E "^geqrf"
  done
done
