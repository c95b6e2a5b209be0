#!/usr/bin/env python3
"""Per-kernel totals from `ncu --metrics gpu__time_duration.sum --csv` output.

    python3 scripts/ncu_summary.py FILE.csv [top]

Prints kernels by total time (calls, total us, average us) and the sum of kernel time, to
set against the wall time of the same call: the difference is launch gaps and host work.
"""
import collections
import csv
import sys


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    rows = [r for r in csv.reader(open(path, errors="replace")) if len(r) > 10]
    if not rows:
        print(f"{path}: no kernel rows")
        return
    head, rows = rows[0], rows[1:]
    ki, vi, ui = head.index("Kernel Name"), head.index("Metric Value"), head.index("Metric Unit")
    tot, cnt = collections.defaultdict(float), collections.Counter()
    for r in rows:
        name = r[ki][:90]
        v = float(r[vi].replace(",", ""))
        unit = r[ui]
        v = v / 1e3 if unit in ("ns", "nsecond") else (v * 1e3 if unit in ("ms", "msecond") else v)
        tot[name] += v
        cnt[name] += 1
    print(f"{'kernel':90s} {'calls':>6s} {'total_us':>10s} {'avg_us':>8s}")
    for name in sorted(tot, key=lambda k: -tot[k])[:top]:
        print(f"{name:90s} {cnt[name]:6d} {tot[name]:10.1f} {tot[name] / cnt[name]:8.2f}")
    print(f"sum of kernel time (us): {sum(tot.values()):.1f}  kernels: {sum(cnt.values())}")


if __name__ == "__main__":
    main()
