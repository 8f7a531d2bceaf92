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
# shellcheck source=lib/qemu_common.sh
source "$root/scripts/lib/qemu_common.sh"
firmware_init firmware-m4f thumbv7em-none-eabihf netduinoplus2
firmware_lint

echo "== self-test: a wrong expected output must fail the run"
firmware_build --features wrong-golden >/dev/null
cp "$elf" "$out/wrong-golden.elf"
firmware_must_fail wrong-golden "DIFFERS" "the difference from TFLite Micro's output"

firmware_build_checked
# The generated memory.x maps SRAM onto cortex-m-rt's RAM.
firmware_elf_check "$out_dir/planner/memory.x"
firmware_run
grep -q "^golden person_detect .*: bit-exact" "$out/firmware-m4f.log" ||
    die "the firmware exited 0 but printed no bit-exact golden line"
exit 0
