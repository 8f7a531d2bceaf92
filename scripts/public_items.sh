#!/usr/bin/env bash
# Counts the public items each library crate documents: the entries of rustdoc's `all.html`
# (structs, enums, traits, functions, constants, macros, type aliases; modules are not
# entries), leaving out `planner::rt`, which re-exports the `planner-rt` crate whole.
# Items behind `#[doc(hidden)]` and re-exports marked `#[doc(no_inline)]` are not entries.
#
#   bash scripts/public_items.sh          # one line per crate: `<crate> <items>`
set -euo pipefail
cd "$(dirname "$0")/.."
crates=(planner planner_rt planner_planfile planner_kernels planner_build)
RUSTDOCFLAGS="-D warnings" cargo doc -q --no-deps \
    -p planner -p planner-rt -p planner-planfile -p planner-kernels -p planner-build
for c in "${crates[@]}"; do
    all="target/doc/$c/all.html"
    n=$(grep -o '<li><a href="[^"]*">' "$all" | grep -vc 'href="rt/' || true)
    echo "$c $n"
done
