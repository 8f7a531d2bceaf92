#!/usr/bin/env bash
# Builds the Cortex-M4F firmware (examples/firmware-m4f: person detection planned from the
# `netduinoplus2` board preset, run through the generated `run()` with the reference kernels)
# for thumbv7em-none-eabihf and runs it on QEMU's netduinoplus2 machine (STM32F405): its
# output must equal TFLite Micro's golden bytes, and QEMU must exit with status 0. First proves
# the comparison is real: a build whose expected output has one bit flipped must fail the run
# with status 1.
#
# Exits with the firmware's status (semihosting SYS_EXIT: 0 on success, 1 on failure; 124 if
# QEMU had to be killed by the timeout), or 1 when a check around it fails.
#
# Installs what it needs when missing: Debian's qemu-system-arm, the rustup target.
# QEMU_TIMEOUT (seconds, default 60) bounds every QEMU run.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
fw="$root/examples/firmware-m4f"
target=thumbv7em-none-eabihf
elf="$fw/target/$target/release/firmware-m4f"
out="$fw/target/qemu"
qemu_timeout="${QEMU_TIMEOUT:-60}"

# shellcheck source=lib/qemu_common.sh
source "$root/scripts/lib/qemu_common.sh"
setup_qemu "$target"
echo "== $(qemu-system-arm --version | head -n 1)"
mkdir -p "$out"

run_qemu() { run_qemu_on netduinoplus2 "$1"; }

# The firmware is outside the workspace, so the workspace's fmt and clippy miss it.
echo "== fmt and clippy (firmware-m4f)"
(cd "$fw" && cargo fmt --check && nice -n 10 cargo clippy --release --quiet -- -D warnings)

echo "== self-test: a wrong expected output must fail the run"
(cd "$fw" && nice -n 10 cargo build --release --quiet --features wrong-golden)
cp "$elf" "$out/wrong-golden.elf"
status=0
run_qemu "$out/wrong-golden.elf" >"$out/wrong-golden.log" 2>&1 || status=$?
cat "$out/wrong-golden.log"
if [ "$status" -ne 1 ] || ! grep -q "DIFFERS" "$out/wrong-golden.log"; then
    die "self-test: expected the comparison to fail the run with status 1, got status $status"
fi
echo "self-test: the difference was reported and QEMU exited with status 1, as it should"

echo "== build"
start="$(now)"
# The build script's OUT_DIR: the plan files and the generated memory.x are there.
out_dir="$( (cd "$fw" && nice -n 10 cargo build --release --message-format=json-render-diagnostics) |
    sed -n 's/.*"reason":"build-script-executed".*"package_id":"[^"]*firmware-m4f[^"]*".*"out_dir":"\([^"]*\)".*/\1/p' |
    tail -n 1)"
build_s="$(since "$start")"
[ -n "$out_dir" ] || die "cargo reported no OUT_DIR for firmware-m4f's build script"
cp "$elf" "$out/firmware-m4f.elf"

echo "== ELF check"
# The linked image against the plan: every arena in its planned region, at its size and
# alignment, inside the board's memory (the generated memory.x maps SRAM onto cortex-m-rt's RAM).
(cd "$root" && cargo run --quiet -p firmware-elf --bin firmware-elf-check -- \
    "$out/firmware-m4f.elf" --script "$out_dir/planner/memory.x" --plan-dir "$out_dir/planner")

echo "== run on qemu-system-arm -M netduinoplus2"
start="$(now)"
status=0
run_qemu "$out/firmware-m4f.elf" | tee "$out/firmware-m4f.log" || status=$?
run_s="$(since "$start")"
echo "== firmware exit status $status (build ${build_s}s, QEMU run ${run_s}s)"
[ "$status" -eq 0 ] || exit "$status"
grep -q "^golden person_detect .*: bit-exact" "$out/firmware-m4f.log" ||
    die "the firmware exited 0 but printed no bit-exact golden line"
exit 0
