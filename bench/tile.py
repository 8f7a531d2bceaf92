#!/usr/bin/env python3
"""Writes a MiniMalloc problem (`id,lower,upper,size`) of COPIES copies of TRACE, one after
another in time, to standard output.

    python3 bench/tile.py TRACE.csv COPIES > tiled.csv

A real allocation trace of some 10^4 buffers, repeated to 10^6 rows: the lifetimes and
sizes keep the trace's shape (how they line up, how many overlap), which random rows do not.
Copy k's buffers are named `k:ID` and live from `lower + k * span` to `upper + k * span`,
where `span` is the trace's last `upper` plus one, so copies do not overlap.
"""
import csv
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], newline="") as f:
        rows = [r for r in csv.DictReader(f)]
    copies = int(sys.argv[2])
    span = max(int(r["upper"]) for r in rows) + 1
    out = ["id,lower,upper,size"]
    for k in range(copies):
        for r in rows:
            lo, hi = int(r["lower"]) + k * span, int(r["upper"]) + k * span
            out.append(f"{k}:{r['id']},{lo},{hi},{r['size']}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
