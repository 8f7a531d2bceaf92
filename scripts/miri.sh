#!/usr/bin/env bash
# Runs the runtime's tests (the `planner-rt` crate: unit tests and doctests) under Miri, the interpreter that
# catches undefined behaviour in unsafe code, with both aliasing models: Stacked Borrows
# (Miri's default) and Tree Borrows. Installs nightly and Miri first when they are missing.
#
#   bash scripts/miri.sh            # every planner-rt test
#   bash scripts/miri.sh slab::     # only the step-scope tests
#
# `planner-rt` is no_std and has no features: the manifest, importer and planner
# dependencies of the host crate are never built for Miri.
set -euo pipefail
cd "$(dirname "$0")/.."

filter="${1:-}"

# --no-self-update: installing a toolchain must not replace the machine's rustup binary.
rustup toolchain install nightly --profile minimal --no-self-update
rustup component add miri rust-src --toolchain nightly
cargo +nightly miri setup

# Miri interprets on one host thread, so the two aliasing models run side by side, the second
# in a target directory of its own (cargo holds a target directory's lock for a whole run).
logs="$(mktemp -d)"
echo "== miri (stacked borrows and tree borrows, side by side): unit tests matching ${filter}"
cargo +nightly miri test -p planner-rt --lib -- "${filter}" >"$logs/stacked.log" 2>&1 &
stacked=$!
MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-tree-borrows" \
    cargo +nightly miri test -p planner-rt --lib --target-dir target/miri-tree -- "${filter}" \
    >"$logs/tree.log" 2>&1 &
tree=$!
status=0
wait "$stacked" || status=1
wait "$tree" || status=$((status + 2))
echo "-- stacked borrows"
cat "$logs/stacked.log"
echo "-- tree borrows"
cat "$logs/tree.log"
rm -rf "$logs"
case "$status" in
0) ;;
1) echo "miri (stacked borrows) failed" >&2; exit 1 ;;
2) echo "miri (tree borrows) failed" >&2; exit 1 ;;
*) echo "miri failed under both aliasing models" >&2; exit 1 ;;
esac
echo "== miri: doctests matching ${filter}"
cargo +nightly miri test -p planner-rt --doc -- "${filter}"
