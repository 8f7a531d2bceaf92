#!/usr/bin/env python3
"""Writes a random MiniMalloc problem (`id,lower,upper,size`) to standard output.

    python3 bench/rows.py ROWS STEPS MAX_LIFE [--log-sizes] > big.csv

ROWS buffers, each live from a uniform start in [0, STEPS) for 1..=MAX_LIFE steps; sizes
uniform in 16..=4096 bytes, or log-uniform in 16 B..1 MiB with --log-sizes. Seeded by its
arguments: the same arguments write the same bytes.
"""
import math
import random
import sys


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    log_sizes = "--log-sizes" in sys.argv[1:]
    if len(args) != 3:
        sys.exit(__doc__)
    rows, steps, life = (int(a) for a in args)
    r = random.Random(f"{rows}:{steps}:{life}:{log_sizes}")
    out = ["id,lower,upper,size"]
    for i in range(rows):
        lo = r.randrange(steps)
        if log_sizes:
            size = int(math.exp(r.uniform(math.log(16), math.log(1 << 20))))
        else:
            size = r.randint(16, 4096)
        out.append(f"b{i},{lo},{lo + r.randint(1, life)},{size}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
