#!/usr/bin/env bash
# Runs every fuzz target in fuzz/ (libFuzzer through libfuzzer-sys) for a bounded time on
# nightly: FUZZ_SECONDS per target (default 60), overflow checks and debug assertions on,
# AddressSanitizer on unless FUZZ_SANITIZER=none. New inputs go to fuzz/work/<target> (ignored
# by git); the committed seeds in fuzz/corpus/<target> are read only. A crash, a hang over 2 s
# or an RSS over 2 GiB fails the run, and the input is left in fuzz/artifacts/<target>/.
# FUZZ_JOBS targets run at once (default the core count; FUZZ_TARGETS picks the targets).
# Skipped, with a note, when no nightly toolchain is installed.
#
# The targets are built with cargo and sanitizer-coverage flags directly, so no cargo-fuzz
# install is needed (`cargo +nightly fuzz run <target>` works on the same workspace too).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
sanitizer="${FUZZ_SANITIZER:-address}"
if ! rustup toolchain list | grep -q '^nightly'; then
    echo "no nightly toolchain: fuzzing skipped (rustup toolchain install nightly to run it)"
    exit 0
fi
# libfuzzer-sys compiles libFuzzer's C++ sources.
if ! command -v c++ >/dev/null 2>&1; then
    echo "-- installing g++ (libFuzzer is C++)"
    sudo_if() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
    sudo_if apt-get update -qq
    sudo_if env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ >/dev/null
fi
triple="$(rustc -vV | sed -n 's/^host: //p')"
flags="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4"
flags+=" -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
flags+=" -Cllvm-args=-sanitizer-coverage-pc-table"
flags+=" -Cllvm-args=-sanitizer-coverage-trace-compares"
flags+=" --cfg fuzzing -Cdebug-assertions"
case "$sanitizer" in
none) ;;
address) flags+=" -Zsanitizer=address" ;;
*)
    echo "FUZZ_SANITIZER is $sanitizer; use address or none" >&2
    exit 2
    ;;
esac
targets="${FUZZ_TARGETS:-tflite manifest_text manifest_structured csv_packers plan_file generated_names}"
echo "-- building the fuzz targets (sanitizer: $sanitizer)"
# --target keeps build scripts and proc macros uninstrumented.
RUSTFLAGS="$flags" cargo +nightly build --quiet --release --manifest-path fuzz/Cargo.toml \
    --target "$triple" --target-dir fuzz/target/"$sanitizer" --bins
bin="fuzz/target/$sanitizer/$triple/release"
# One target per core at a time (FUZZ_JOBS, default the core count): each libFuzzer run is
# one process on one core, so the targets' wall time is divided by the lanes.
jobs="${FUZZ_JOBS:-$(nproc)}"
run_target() {
    local t="$1"
    mkdir -p "fuzz/work/$t" "fuzz/artifacts/$t"
    rm -rf "fuzz/artifacts/$t"/*
    local status=0
    "$bin/$t" "fuzz/work/$t" "fuzz/corpus/$t" -artifact_prefix="fuzz/artifacts/$t/" \
        -max_total_time="$seconds" -timeout=2 -rss_limit_mb=2048 -print_final_stats=1 \
        >"fuzz/work/$t.log" 2>&1 || status=$?
    echo "$status" >"fuzz/work/$t.status"
}
set -- $targets
while [ "$#" -gt 0 ]; do
    lane=()
    while [ "$#" -gt 0 ] && [ "${#lane[@]}" -lt "$jobs" ]; do
        echo "-- $1 (${seconds} s)"
        run_target "$1" &
        lane+=("$1")
        shift
    done
    wait
    for t in "${lane[@]}"; do
        status="$(cat "fuzz/work/$t.status")"
        echo "-- $t:"
        grep -E 'stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs|ERROR|SUMMARY|panicked' \
            "fuzz/work/$t.log" || true
        if [ "$status" -ne 0 ] || compgen -G "fuzz/artifacts/$t/*" >/dev/null; then
            tail -n 40 "fuzz/work/$t.log"
            echo "fuzz target $t found a failing input (status $status): fuzz/artifacts/$t/"
            exit 1
        fi
    done
done
