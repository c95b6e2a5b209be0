#!/usr/bin/env python3
"""Kernel time by name from `ncu --metrics gpu__time_duration.sum --csv` output:
ncu_by_name.py CSV [TOP] prints the total and the TOP (default 16) names by time."""
import collections
import csv
import sys

rows = [line for line in open(sys.argv[1]) if line.startswith('"')]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 16
tot = collections.defaultdict(float)
cnt = collections.Counter()
for r in csv.DictReader(rows):
    try:
        val = float(r["Metric Value"].replace(",", ""))
    except Exception:
        continue
    name = r["Kernel Name"].split("(")[0][:70]
    tot[name] += val
    cnt[name] += 1
print(f"total {sum(tot.values())/1e3:.1f} us over {sum(cnt.values())} kernels")
for name, t in sorted(tot.items(), key=lambda x: -x[1])[:top]:
    print(f"  {t/1e3:9.1f} us  {cnt[name]:4d}  {t/cnt[name]/1e3:7.2f} us each  {name}")
