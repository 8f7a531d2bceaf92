#!/usr/bin/env bash
# Builds the Cortex-M55 firmware (examples/firmware-m55), checks the linked ELF against the
# memory map and every model's plan, and runs it on QEMU's mps3-an547 machine: hello_world
# inference (compared with the host example's output), the canary run of every bundled
# model that fits the board and of a model the planner reorders (models/branches.toml), and
# the group run (two models back to back from one shared scratch arena, each against its
# golden, the first model's state kept; the ELF check proves the shared arena is the group's
# need), and te_mcunet_vww planned in place (every op's output against TFLite Micro's; its
# scratch arena in the ELF must be the in-place plan's, under 92,000 bytes),
# tflm_person_detect_int8 planned with patches (its first stage patch by patch; the split
# tensor and every op output after it against TFLite Micro's; its scratch arena in the ELF
# must be the patch plan's, at most 23,000 bytes), tflm_person_detect_int8 planned with row
# overlap (every op's output against TFLite Micro's; its scratch arena in the ELF must be the
# row-overlap plan's, at most 40,000 bytes), and the two LSTM models (every op's output
# over three runs, the state carried, against TFLite Micro's).
# Then proves the checks are real: a HardFault must be reported and fail the run, and
# a plan with one live tensor moved onto another must be rejected by rustc and, with the plan
# check left out, caught by the canary on the board.
#
# Exits with the firmware's status (semihosting SYS_EXIT: 0 on success, 1 on failure; 124
# if QEMU had to be killed by the timeout), or 1 when a check around it fails.
#
# Installs what it needs when missing: Debian's qemu-system-arm, the rustup target.
# QEMU_TIMEOUT (seconds, default 60) bounds every QEMU run: a fault the firmware cannot
# report would otherwise hang it.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/qemu_common.sh
source "$root/scripts/lib/qemu_common.sh"
firmware_init firmware-m55 thumbv8m.main-none-eabihf mps3-an547

# 0. Formatting and lints.
firmware_lint

# 1. The fault handler must end the run with a failure, not hang QEMU.
echo "== fault self-test"
firmware_build --features fault-selftest >/dev/null
cp "$elf" "$out/fault-selftest.elf"
firmware_must_fail fault-selftest "hard fault" "a hard fault"

# 2. A plan with a live tensor moved onto another: rustc must reject it.
echo "== broken plan: rustc must reject it"
if (cd "$fw" && cargo build --release --features broken-plan) >"$out/broken-build.log" 2>&1; then
    die "the broken plan compiled; the plan check let it through"
fi
grep -E "are both live at op [0-9]+ and share bytes" "$out/broken-build.log" ||
    { cat "$out/broken-build.log"; die "the broken plan failed to build, but not on the plan check"; }

# 3. The same plan with the check left out: the canary on the board must catch it. The same
# build flips one of TFLite Micro's per-op digests of te_mcunet_vww in place (wrong-golden):
# the in-place run must report the difference too.
echo "== broken plan, plan check left out: the canary must catch it; a flipped per-op golden must fail"
firmware_build --features broken-plan,skip-plan-check,wrong-golden >/dev/null
cp "$elf" "$out/broken-plan.elf"
status=0
run_qemu "$out/broken-plan.elf" >"$out/broken-plan.log" 2>&1 || status=$?
grep -E "canary hello_world: FAILED|in place .*: FAILED|patches .*: FAILED" "$out/broken-plan.log" || true
if [ "$status" -ne 1 ] || ! grep -q "canary hello_world: FAILED: .*live tensor" "$out/broken-plan.log"; then
    cat "$out/broken-plan.log"
    die "the canary did not catch the broken plan (status $status)"
fi
if ! grep -q "in place vww_in_place: FAILED: run 0 op 0 " "$out/broken-plan.log"; then
    cat "$out/broken-plan.log"
    die "the in-place run did not report the flipped per-op golden digest (status $status)"
fi
if ! grep -q "patches person_patches: FAILED: run 0 op [0-9]* ([A-Z_0-9]*) input 0: " "$out/broken-plan.log"; then
    cat "$out/broken-plan.log"
    die "the patch-based run did not report the flipped digest of the split tensor (status $status)"
fi

# 4. The real firmware.
firmware_build_checked
firmware_elf_check "$fw/memory.x"

# te_mcunet_vww in place and tflm_person_detect_int8 with patches: the ELF check above proved
# every arena has its plan's size; their scratch must also be the small one, read from the
# plan and from the ELF's section headers: vww_in_place 89,600 bytes planned (the classic
# plan needs 161,472), person_patches 22,488 (issue 27's target: at most 23,000).
need_readelf
# check_scratch MODEL LIMIT WHY: MODEL's scratch.DTCM arena, in its plan and in the ELF's
# section .planner.MODEL.scratch.dtcm, must be equal (up to the section's alignment) and at
# most LIMIT bytes.
check_scratch() {
    local model="$1" limit="$2" why="$3"
    local plan_json="$out_dir/planner/$model.plan.json"
    [ -f "$plan_json" ] || die "no plan $plan_json: the firmware's build.rs must plan models/$model.toml"
    local plan_scratch
    plan_scratch="$(grep -A4 '"name": "scratch.DTCM"' "$plan_json" | sed -n 's/.*"size": \([0-9]*\).*/\1/p' | head -n 1)"
    [ -n "$plan_scratch" ] || die "$plan_json: no scratch.DTCM arena size; plan the model's scratch in DTCM"
    local hex align
    read -r hex align < <("$readelf" -SW "$out/firmware-m55.elf" | sed 's/^.*\] //' |
        awk -v s=".planner.$model.scratch.dtcm" '$1 == s { print $5, $NF }') || true
    [ -n "${hex:-}" ] || die "$out/firmware-m55.elf: no section .planner.$model.scratch.dtcm"
    local elf_scratch=$((16#$hex))
    # The linker rounds the section up to its alignment.
    local rounded=$(((plan_scratch + align - 1) / align * align))
    echo "$model: scratch arena ${elf_scratch} bytes in the ELF, ${plan_scratch} in the plan (${rounded} at the section's ${align}-byte alignment; limit $limit)"
    [ "$plan_scratch" -le "$limit" ] && [ "$elf_scratch" -le "$limit" ] ||
        die "$model: the scratch arena is ${plan_scratch} bytes in the plan, ${elf_scratch} in the ELF, over $limit; $why"
    [ "$elf_scratch" -eq "$rounded" ] ||
        die "$model: the ELF's scratch arena is ${elf_scratch} bytes, the plan's ${plan_scratch} rounded to ${align} bytes is ${rounded}; link the plan's arena"
}
check_scratch vww_in_place 92000 "the in-place plan no longer shrinks it"
check_scratch person_patches 23000 "the patch plan no longer shrinks it (issue 27's target)"
check_scratch person_rows 40000 "the row-overlap plan no longer shrinks it (issue 38's target)"

firmware_run
# The reordered model (models/branches.toml, `schedule = "memory"`) must have run its canary.
grep -q "canary branches: ok" "$out/firmware-m55.log" ||
    die "no passing canary run of the reordered model (branches) in the firmware's output"
# The model whose SRAM arenas the firmware binds itself (models/app_bound.toml) must have run.
grep -q "golden app_hello .*bit-exact" "$out/firmware-m55.log" ||
    die "no bit-exact run of the app_bound model (app_hello) in the firmware's output"
# te_mcunet_vww in place: every op output and the final output equal to TFLite Micro's.
grep -E "^in place vww_in_place: .* ([0-9]+) op outputs compared .*, \1 equal to TFLite Micro's; final output bit-exact" "$out/firmware-m55.log" >/dev/null ||
    die "no passing in-place run of te_mcunet_vww (vww_in_place) in the firmware's output"
# tflm_person_detect_int8 with patches: the split tensor and every op output after the split
# equal to TFLite Micro's digests, and the final output.
grep -E "^patches person_patches: ([0-9]+) op outputs compared over 3 runs, \1 equal to TFLite Micro's \(split after op [0-9]+, grid [0-9]+x[0-9]+, scratch [0-9]+ bytes\); final output bit-exact" "$out/firmware-m55.log" >/dev/null ||
    die "no passing patch-based run of tflm_person_detect_int8 (person_patches) in the firmware's output"
# tflm_person_detect_int8 with row overlap: every op output equal to TFLite Micro's digests,
# and the final output.
grep -E "^rows person_rows: [0-9]+ scratch bytes; ([0-9]+) op outputs compared over 3 runs \(0 PADs folded\), \1 equal to TFLite Micro's; final output bit-exact" "$out/firmware-m55.log" >/dev/null ||
    die "no passing row-overlap run of tflm_person_detect_int8 (person_rows) in the firmware's output"
# The LSTM models: every op output over three runs on one handle, the state carried over,
# equal to TFLite Micro's digests (speech_lstm's hidden state has zero point -1).
for lstm in mnist_lstm speech_lstm; do
    grep -E "^lstm $lstm: ([0-9]+) op outputs compared over 3 runs \(state carried\), \1 equal to TFLite Micro's" "$out/firmware-m55.log" >/dev/null ||
        die "no passing LSTM run of $lstm in the firmware's output"
done

# 5. The firmware's hello_world outputs must equal the host example's.
echo "== hello_world: firmware vs host example"
awk '$1 == "sweep" && $2 != "x" { print $2, $3 }' "$out/firmware-m55.log" >"$out/sweep-firmware.txt"
(cd "$root" && cargo run --quiet -p host) |
    awk 'NF == 4 && $1 ~ /^[0-9.]+$/ { print $1, $2 }' >"$out/sweep-host.txt"
[ -s "$out/sweep-host.txt" ] || die "the host example printed no sweep"
if ! diff "$out/sweep-firmware.txt" "$out/sweep-host.txt"; then
    die "the firmware's hello_world outputs differ from the host example's (above: < firmware, > host)"
fi
echo "hello_world: the firmware's $(wc -l <"$out/sweep-firmware.txt") outputs equal the host example's"
exit 0
