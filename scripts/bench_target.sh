#!/usr/bin/env bash
# The on-target benchmark: builds examples/bench-target for the Cortex-M55 (QEMU mps3-an547,
# thumbv8m.main-none-eabihf, -C target-cpu=cortex-m55) and the Cortex-M4 with FPU (QEMU
# mps2-an386, thumbv7em-none-eabihf, -C target-cpu=cortex-m4), runs it under
# `-icount shift=0` and prints instructions per inference of every bundled model with the
# reference and the optimized kernel sets, and with --per-op per op kind. Every op output of
# every plan is compared with TFLite Micro's per-op digests on the board; the run fails when
# one differs. First proves that comparison is real: a build with one digest flipped
# (feature wrong-golden) must fail.
#
#   bash scripts/bench_target.sh [--core m55|m4f|both] [--models STEM,STEM] [--reference STEM,STEM|all]
#                                [--per-op] [--no-self-test]
#
# Every model runs with the optimized set; the reference set runs on person detection,
# te_mcunet_vww, the KWS DS-CNN and resnet8 unless --reference names others (or `all`).
#
# What the counts are: guest instructions retired, read from SysTick (core clock) in QEMU's
# virtual time, where -icount shift=0 makes every instruction 1 ns; calibrated on a loop of
# 20 million instructions. They do not model cycles: no pipeline, no wait states, no memory
# latency, one count per instruction whatever its beats (a Helium instruction that takes two
# or four beats on a real Cortex-M55 counts once). On a board, read the DWT cycle counter
# (docs/firmware.md).
#
# Logs: examples/bench-target/target/bench-<core>.log; the firmware builds in CARGO_TARGET_DIR
# when set (else examples/bench-target/target). Installs what it needs when missing
# (Debian's qemu-system-arm, the rustup targets). QEMU_TIMEOUT (seconds, default 600)
# bounds every QEMU run.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/qemu_common.sh
source "$root/scripts/lib/qemu_common.sh"

cores="both"
models=""
reference=""
per_op=0
self_test=1
while [ $# -gt 0 ]; do
    case "$1" in
    --core) cores="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --reference) reference="$2"; shift 2 ;;
    --per-op) per_op=1; shift ;;
    --no-self-test) self_test=0; shift ;;
    *) die "unknown argument $1; usage: bench_target.sh [--core m55|m4f|both] [--models STEM,STEM] [--reference STEM,STEM|all] [--per-op] [--no-self-test]" ;;
    esac
done
case "$cores" in
both) cores="m55 m4f" ;;
m55 | m4f) ;;
*) die "--core takes m55, m4f or both, not $cores" ;;
esac

fw="$root/examples/bench-target"
out="$fw/target"
qemu_timeout="${QEMU_TIMEOUT:-600}"
mkdir -p "$out"

# target_of CORE, machine_of CORE
target_of() { if [ "$1" = m55 ]; then echo thumbv8m.main-none-eabihf; else echo thumbv7em-none-eabihf; fi; }
machine_of() { if [ "$1" = m55 ]; then echo mps3-an547; else echo mps2-an386; fi; }

# build CORE [cargo args...]: builds the firmware for CORE; prints the ELF's path.
build() {
    local core="$1" target
    shift
    target="$(target_of "$core")"
    # Bash clears `set -e` inside `$(...)`: without the `return`, a failed build would
    # print the path of the last firmware built and the run would measure that one.
    (cd "$fw" && nice -n 10 cargo build --release --quiet --target "$target" "$@") >&2 || return 1
    echo "${CARGO_TARGET_DIR:-$out}/$target/release/bench-target"
}

# run_icount CORE ELF: runs ELF on CORE's machine, one instruction per virtual ns.
run_icount() {
    timeout "$qemu_timeout" qemu-system-arm -M "$(machine_of "$1")" -nographic -icount shift=0 \
        -semihosting-config enable=on,target=native -kernel "$2" </dev/null
}

for core in $cores; do
    setup_qemu "$(target_of "$core")"
done
echo "== $(qemu-system-arm --version | head -n 1)"
echo "== fmt and clippy (bench-target)"
(cd "$fw" && cargo fmt --check && for core in $cores; do
    nice -n 10 cargo clippy --release --quiet --target "$(target_of "$core")" -- -D warnings
done)

if [ "$self_test" = 1 ]; then
    core="${cores%% *}"
    echo "== self-test ($core): a flipped TFLite Micro digest must fail the run"
    elf="$(BENCH_MODELS=tflm_hello_world_int8 build "$core" --features wrong-golden)"
    cp "$elf" "$out/wrong-golden-$core.elf"
    status=0
    run_icount "$core" "$out/wrong-golden-$core.elf" >"$out/wrong-golden-$core.log" 2>&1 || status=$?
    if [ "$status" -ne 1 ] || ! grep -q "FAILED: run 0 op [0-9]* (.*) output 0: fnv1a64" "$out/wrong-golden-$core.log"; then
        cat "$out/wrong-golden-$core.log"
        die "the flipped digest was not reported (status $status)"
    fi
    echo "the flipped digest was reported and the run failed with status 1, as it should"
fi

# Each core's QEMU run (one host thread) goes on in the background while the next core's
# firmware builds; the reports follow in core order once every run has ended.
for core in $cores; do
    echo "== build ($core, $(target_of "$core"))"
    start="$(now)"
    elf="$(BENCH_MODELS="$models" BENCH_REFERENCE="$reference" build "$core")"
    echo "built in $(since "$start") s"
    cp "$elf" "$out/bench-$core.elf"
    rm -f "$out/bench-$core.status"
    echo "== run on qemu-system-arm -M $(machine_of "$core") -icount shift=0 (in the background)"
    (
        start="$(now)"
        status=0
        run_icount "$core" "$out/bench-$core.elf" >"$out/bench-$core.log" 2>&1 || status=$?
        echo "$status $(since "$start")" >"$out/bench-$core.status"
    ) &
done
wait
for core in $cores; do
    read -r status seconds <"$out/bench-$core.status" ||
        die "the $core run left no status; see $out/bench-$core.log"
    echo "== $core on qemu-system-arm -M $(machine_of "$core")"
    grep -v '^op ' "$out/bench-$core.log" | grep -v '^bench ' || true
    echo "QEMU ran ${core} in $seconds s, exit status $status"
    # Instructions per inference: reference, optimized, and the optimized share.
    awk -v core="$core" '
        $1 == "bench" && $2 == core {
            n[$3 " " $4] = $6
            if (!($3 in seen)) { seen[$3] = 1; order[++m] = $3 }
        }
        END {
            printf "%-28s %14s %14s %9s\n", "model (" core ")", "reference", "optimized", "ratio"
            for (i = 1; i <= m; i++) {
                s = order[i]; r = n[s " ref"]; o = n[s " opt"]
                if (r == "") printf "%-28s %14s %14s %9s\n", s, "-", o, "-"
                else printf "%-28s %14s %14s %8.2fx\n", s, r, o, (o > 0 ? r / o : 0)
            }
        }' "$out/bench-$core.log"
    if [ "$per_op" = 1 ]; then
        # Per model and kernel set: instructions by op kind, largest first.
        awk -v core="$core" '
            $1 == "op" && $2 == core { k = $3 " " $4; t[k " " $6] += $7; tot[k] += $7 }
            END { for (x in t) { split(x, a, " "); printf "%s %s %s %d %.1f\n", a[1], a[2], a[3], t[x], 100 * t[x] / tot[a[1] " " a[2]] } }' \
            "$out/bench-$core.log" | sort -k1,1 -k2,2 -k4,4nr |
            awk '{ printf "  %-28s %-4s %-28s %12d %5.1f%%\n", $1, $2, $3, $4, $5 }'
    fi
    [ "$status" -eq 0 ] || die "the $core run failed (status $status); see $out/bench-$core.log"
done
