#!/usr/bin/env python3
"""Where a firmware's instructions go under QEMU, by function and by basic block.

    python3 scripts/profile_target.py ELF [--machine mps3-an547|mps2-an386] [--top N]

Runs ELF under `qemu-system-arm -icount shift=0 -d in_asm,exec,nochain` (every translated
block logged once, every execution of a block logged), counts each block's instructions
from `llvm-objdump` (QEMU's own disassembler does not know Helium, so its listing cannot be
counted), and prints instructions per symbol and the hottest blocks: executions times
instructions. The totals are guest instructions retired, as `bench_target.sh` counts them,
including the firmware's own checks and timing loops; build the firmware with
`BENCH_CASES=0 BENCH_MODELS=<model> BENCH_REFERENCE=none` (examples/bench-target) to see
one model alone. A block QEMU translated twice with different lengths (an I/O rewind) is
counted with its last length.

Needs qemu-system-arm and llvm-objdump; the log (several GB for a large model) goes to a
temporary directory that is removed afterwards.
"""

import argparse
import bisect
import collections
import os
import re
import subprocess
import sys
import tempfile


def instruction_addresses(elf, cpu):
    """Sorted addresses of every instruction llvm-objdump decodes in ELF."""
    out = subprocess.run(
        ["llvm-objdump", "-d", f"--mcpu={cpu}", "--no-show-raw-insn", elf],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    addresses = []
    for line in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s", line)
        if m:
            addresses.append(int(m.group(1), 16))
    addresses.sort()
    return addresses


def profile(log, addresses):
    """(instructions per symbol, per block start, executions per block, symbol per block)."""
    span = {}
    executions = collections.Counter()
    symbol = {}
    start = end = None

    def close():
        if start is not None:
            span[start] = bisect.bisect_left(addresses, end) - bisect.bisect_left(addresses, start)

    with open(log, errors="replace") as f:
        for line in f:
            if line.startswith("Trace "):
                pc = int(line.split("[", 1)[1].split("/")[1], 16)
                executions[pc] += 1
                if pc not in symbol:
                    symbol[pc] = line.rsplit("]", 1)[1].strip() or "?"
            elif line.startswith("IN:"):
                close()
                start = None
            elif line.startswith("0x"):
                address, rest = line.split(":", 1)
                address = int(address, 16)
                words = rest.split()
                # A 32-bit Thumb instruction shows two halfwords of hex.
                wide = len(words) > 1 and re.fullmatch(r"[0-9a-f]{4}", words[1]) is not None
                if start is None:
                    start = address
                end = address + (4 if wide else 2)
    close()
    by_symbol = collections.Counter()
    by_block = collections.Counter()
    for pc, n in executions.items():
        count = span.get(pc, 0) * n
        by_symbol[symbol[pc]] += count
        by_block[pc] += count
    return by_symbol, by_block, executions, span, symbol


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("elf")
    ap.add_argument("--machine", default="mps3-an547", help="mps3-an547 (M55) or mps2-an386 (M4F)")
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    cpu = "cortex-m55" if a.machine == "mps3-an547" else "cortex-m4"
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "qemu.log")
        run = subprocess.run(
            ["qemu-system-arm", "-M", a.machine, "-nographic", "-icount", "shift=0",
             "-semihosting-config", "enable=on,target=native", "-kernel", a.elf,
             "-d", "in_asm,exec,nochain", "-D", log],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1800,
        )
        sys.stdout.write(run.stdout)
        by_symbol, by_block, executions, span, symbol = profile(log, instruction_addresses(a.elf, cpu))
    total = sum(by_symbol.values())
    print(f"instructions traced: {total} (QEMU exit status {run.returncode})")
    for name, n in by_symbol.most_common(a.top):
        print(f"{n:14d} {100 * n / max(total, 1):5.1f}%  {name}")
    print("hottest blocks: instructions, start, length, executions, symbol")
    for pc, n in by_block.most_common(a.top):
        print(f"{n:14d} {pc:#010x} {span.get(pc, 0):4d} x{executions[pc]:<9d} {symbol[pc][:80]}")


if __name__ == "__main__":
    main()
