#!/usr/bin/env python3
"""Per-kernel totals from `ncu --metrics gpu__time_duration.sum,launch__grid_size --csv`,
grouped by kernel name and grid size (so that one cuBLAS kernel called at several shapes
shows each), largest total first.

usage: ncu_by_grid.py FILE.csv [top]"""
import collections
import csv
import sys


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    rows = [r for r in csv.reader(open(path, errors="replace")) if len(r) > 10]
    if not rows:
        print(f"{path}: no kernel rows")
        return
    head, rows = rows[0], rows[1:]
    ii, ki = head.index("ID"), head.index("Kernel Name")
    mi, vi, ui = head.index("Metric Name"), head.index("Metric Value"), head.index("Metric Unit")
    time, grid, name = {}, {}, {}
    for r in rows:
        key = r[ii]
        name[key] = r[ki][:80]
        v = float(r[vi].replace(",", ""))
        if r[mi] == "gpu__time_duration.sum":
            unit = r[ui]
            time[key] = v / 1e3 if unit in ("ns", "nsecond") else (v * 1e3 if unit in ("ms", "msecond") else v)
        elif r[mi] == "launch__grid_size":
            grid[key] = int(v)
    tot, cnt = collections.defaultdict(float), collections.Counter()
    for key, t in time.items():
        g = (name[key], grid.get(key, -1))
        tot[g] += t
        cnt[g] += 1
    print(f"{'kernel':80s} {'grid':>7s} {'calls':>6s} {'total_us':>10s} {'avg_us':>9s}")
    for g in sorted(tot, key=lambda k: -tot[k])[:top]:
        print(f"{g[0]:80s} {g[1]:7d} {cnt[g]:6d} {tot[g]:10.1f} {tot[g] / cnt[g]:9.2f}")
    print(f"sum of kernel time (us): {sum(tot.values()):.1f}  kernels: {sum(cnt.values())}")


if __name__ == "__main__":
    main()
