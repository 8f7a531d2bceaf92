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

echo "== miri (stacked borrows): unit tests matching ${filter}"
cargo +nightly miri test -p planner-rt --lib -- "${filter}"
echo "== miri (tree borrows): unit tests matching ${filter}"
MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-tree-borrows" \
    cargo +nightly miri test -p planner-rt --lib -- "${filter}"
echo "== miri: doctests matching ${filter}"
cargo +nightly miri test -p planner-rt --doc -- "${filter}"
