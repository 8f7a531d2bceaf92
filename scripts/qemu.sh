#!/usr/bin/env bash
# Builds the Cortex-M55 firmware (examples/firmware-m55), checks the linked ELF against the
# memory map and its plan, and runs it on QEMU's mps3-an547 machine. Exits with the
# firmware's status (semihosting SYS_EXIT: 0 on success, 1 on any failure; 124 if QEMU had
# to be killed by the timeout).
#
# Installs what it needs when missing: Debian's qemu-system-arm, the rustup target.
# QEMU_TIMEOUT (seconds, default 60) bounds every QEMU run: a fault the firmware cannot
# report would otherwise hang it.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
fw="$root/examples/firmware-m55"
target=thumbv8m.main-none-eabihf
elf="$fw/target/$target/release/firmware-m55"
out="$fw/target/qemu"
qemu_timeout="${QEMU_TIMEOUT:-60}"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

if ! command -v qemu-system-arm >/dev/null 2>&1; then
    echo "== installing qemu-system-arm"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-system-arm >/dev/null
fi
if ! rustup target list --installed | grep -qx "$target"; then
    echo "== adding rust target $target"
    rustup target add "$target"
fi
echo "== $(qemu-system-arm --version | head -n 1)"

# Runs an image on the Cortex-M55 board; its semihosting output goes to stdout.
run_qemu() {
    timeout "$qemu_timeout" qemu-system-arm -M mps3-an547 -nographic \
        -semihosting-config enable=on,target=native -kernel "$1" </dev/null
}

mkdir -p "$out"

# The fault handler must end the run with a failure, not hang QEMU. Built first so that the
# image left at the usual cargo path is the real firmware.
echo "== fault self-test"
(cd "$fw" && cargo build --release --features fault-selftest)
cp "$elf" "$out/fault-selftest.elf"
set +e
run_qemu "$out/fault-selftest.elf" >"$out/fault-selftest.log" 2>&1
status=$?
set -e
cat "$out/fault-selftest.log"
if [ "$status" -ne 1 ] || ! grep -q "hard fault" "$out/fault-selftest.log"; then
    echo "fault self-test: expected a reported hard fault and exit status 1, got status $status" >&2
    exit 1
fi
echo "fault self-test: the fault was reported and QEMU exited with status 1, as it should"

echo "== build"
start="$(now)"
(cd "$fw" && cargo build --release)
build_s="$(since "$start")"
cp "$elf" "$out/firmware-m55.elf"

echo "== ELF check"
(cd "$root" && cargo run --quiet -p firmware-elf --bin firmware-elf-check -- \
    "$out/firmware-m55.elf" --script "$fw/memory.x")

echo "== run on qemu-system-arm -M mps3-an547"
start="$(now)"
set +e
run_qemu "$out/firmware-m55.elf"
status=$?
set -e
run_s="$(since "$start")"
echo "== firmware exit status $status (build ${build_s}s, QEMU run ${run_s}s)"
exit "$status"
