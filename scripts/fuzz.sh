#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a bounded time on nightly (AddressSanitizer on,
# overflow checks on): FUZZ_SECONDS per target (default 60). New inputs go to
# fuzz/work/<target> (ignored by git); the committed seeds in fuzz/corpus/<target> are read
# only. A crash, a hang over 2 s or an RSS over 2 GiB fails the run, and the input is left
# in fuzz/artifacts/<target>/. Skipped, with a note, when no nightly toolchain is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
if ! rustup toolchain list | grep -q '^nightly'; then
    echo "no nightly toolchain: fuzzing skipped (rustup toolchain install nightly to run it)"
    exit 0
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
targets="${FUZZ_TARGETS:-tflite manifest_text manifest_structured csv_packers plan_file}"
cargo +nightly fuzz build -O
for t in $targets; do
    mkdir -p "fuzz/work/$t"
    rm -rf "fuzz/artifacts/$t"
    echo "-- $t (${seconds} s)"
    cargo +nightly fuzz run -O "$t" "fuzz/work/$t" "fuzz/corpus/$t" -- \
        -max_total_time="$seconds" -timeout=2 -rss_limit_mb=2048 -print_final_stats=1 2>&1 |
        grep -E 'stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs|ERROR|SUMMARY|panicked' || true
    # `cargo fuzz run` exits non-zero on a finding; the pipe above hides it, so check the
    # artifacts directory instead.
    if compgen -G "fuzz/artifacts/$t/*" >/dev/null; then
        echo "fuzz target $t found a failing input: fuzz/artifacts/$t/"
        exit 1
    fi
done
