#!/usr/bin/env bash
# Session 26, third call (H200): why FP64 geqrf's form at 2^22 x 1024 takes 299 ms when its
# kernels, timed one at a time by ncu at the clocks they get, add up to 256 ms (run 2; at
# 2^20 the gap is 4.4 of 71 ms). Two suspects: the look-ahead's two lanes getting in each
# other's way (GPUQR_LOOKAHEAD=0 against the default, same run), and the clocks under a
# sustained FP64 tensor-core load (nvidia-smi sampled every 20 ms during the runs).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tsqr_bench
TS=$b/bench/gpuqr_tsqr_bench
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 20 > "$w/smi.csv" 2>&1 &
smi=$!
$TS --m 4194304 --n 1024 --precision d --methods automatic --forms geqrf --repeat 3 --copies 2.2 --baseline none --variants default,GPUQR_LOOKAHEAD=0,default | tee "$out/bench_d22_lookahead.txt"
stamp
$TS --m 1048576 --n 1024 --precision d --methods automatic --forms geqrf --repeat 5 --baseline none --variants default,GPUQR_LOOKAHEAD=0,default | tee "$out/bench_d20_lookahead.txt"
stamp
kill $smi
python3 - "$w/smi.csv" <<'PY' | tee "$out/smi_summary.txt"
import sys, collections
rows = [l.strip().split(', ') for l in open(sys.argv[1]) if l[0].isdigit()]
print("samples", len(rows))
hist = collections.Counter()
for r in rows:
    try:
        clk = int(r[1].split()[0]); pw = float(r[3].split()[0])
    except Exception:
        continue
    hist[(clk // 100 * 100, r[5])] += 1
for (clk, why), c in sorted(hist.items()):
    print(f"sm clock {clk:5d}-{clk+99} MHz  reasons {why}  samples {c}")
busy = [r for r in rows if float(r[3].split()[0]) > 300]
print("samples above 300 W:", len(busy))
for r in busy[::max(1, len(busy)//40)]:
    print(", ".join(r))
PY
gzip -c "$w/smi.csv" > "$out/smi.csv.gz"
