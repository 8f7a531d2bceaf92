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
    path = sys.argv[1]
    try:
        copies = int(sys.argv[2])
    except ValueError:
        sys.exit(f"COPIES is {sys.argv[2]!r}; give a whole number of copies")
    rows = []
    with open(path, newline="") as f:
        for line, r in enumerate(csv.DictReader(f), start=2):
            try:
                rows.append((r["id"], int(r["lower"]), int(r["upper"]), int(r["size"])))
            except (KeyError, TypeError, ValueError):
                sys.exit(f"{path}:{line}: {r}: need integer lower, upper and size under an id,lower,upper,size header")
    if not rows:
        sys.exit(f"{path}: no rows under the header")
    span = max(upper for _, _, upper, _ in rows) + 1
    out = ["id,lower,upper,size"]
    for k in range(copies):
        for ident, lower, upper, size in rows:
            out.append(f"{k}:{ident},{lower + k * span},{upper + k * span},{size}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
