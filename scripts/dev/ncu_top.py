#!/usr/bin/env python3
"""Summarize `ncu -i X --page source --csv --print-source sass` output: the SASS
instructions with the most warp stall samples, with their share, and the totals.

usage: ncu_top.py source.csv [N]"""
import csv
import sys


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    with open(path, newline="", errors="replace") as f:
        rows = list(csv.reader(f))
    head = next((i for i, r in enumerate(rows) if "Source" in r), None)
    if head is None:
        print("no header with 'Source' in", path)
        return
    cols = rows[head]
    src = cols.index("Source")
    samp = next((i for i, c in enumerate(cols) if c.startswith("Warp Stall Sampling (All")), None)
    nis = next((i for i, c in enumerate(cols) if c.startswith("Warp Stall Sampling (Not")), None)
    addr = cols.index("Address") if "Address" in cols else None
    if samp is None:
        print("columns:", cols)
        return

    def num(r, i):
        try:
            return float(r[i].replace(",", "")) if i is not None and i < len(r) else 0.0
        except ValueError:
            return 0.0

    body = [r for r in rows[head + 1:] if len(r) > samp]
    total = sum(num(r, samp) for r in body) or 1.0
    stalls = [i for i, c in enumerate(cols) if c.startswith("stall_") and "Not Issued" not in c]
    print(f"instructions {len(body)}, stall samples {total:.0f}")
    sums = sorted(((sum(num(r, i) for r in body), cols[i]) for i in stalls), reverse=True)
    print("by reason:", ", ".join(f"{c[6:]} {100 * v / total:.1f}%" for v, c in sums if v > 0))
    for k, r in sorted(enumerate(body), key=lambda kr: -num(kr[1], samp))[:top]:
        a = r[addr] if addr is not None else str(k)
        why = max(stalls, key=lambda i: num(r, i)) if stalls else None
        print(f"{k:5d} {a[-6:]:>6} {100 * num(r, samp) / total:5.1f}% (not issued "
              f"{100 * num(r, nis) / total:5.1f}%, most {cols[why][6:] if why else '-'})  "
              f"{r[src].strip()[:80]}")


if __name__ == "__main__":
    main()
