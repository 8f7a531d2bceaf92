#!/usr/bin/env bash
# Measures how long `include_model!` takes to compile for a chain of N ops (tensor t0 ->
# RELU -> t1 -> ... -> tN, each 64 i8), the accept => compile case of a long model: writes a
# crate whose build.rs plans an inline manifest with planner-build and whose main.rs
# includes the model, then times `cargo build` of that crate alone (its dependencies are
# built first, untimed).
#
#   scripts/chain_compile_time.sh 500 1000 2000 5000
#
# PLANNER_SRC (default: this checkout) is the planner source to build against, so the same
# script measures another revision (`git archive <rev> | tar -x -C /tmp/old`). WORK
# (default: a temporary directory) holds the crates; CARGO_TARGET_DIR is shared by them.
set -euo pipefail
src=${PLANNER_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
work=${WORK:-$(mktemp -d)}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$work/target}
for n in warm "$@"; do
  if [ "$n" = warm ]; then n=2; warm=1; else warm=0; fi
  dir=$work/chain$n
  mkdir -p "$dir/src"
  {
    echo '[model]'
    echo "name = \"chain$n\""
    echo 'tensors = ['
    for ((i = 0; i <= n; i++)); do echo "  { id = \"t$i\", dtype = \"i8\", shape = [64] },"; done
    echo ']'
    echo 'ops = ['
    for ((i = 0; i < n; i++)); do echo "  { opcode = \"RELU\", inputs = [\"t$i\"], outputs = [\"t$((i + 1))\"] },"; done
    echo ']'
  } > "$dir/chain.toml"
  cat > "$dir/Cargo.toml" <<TOML
[package]
name = "chain$n"
version = "0.1.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
planner = { path = "$src/planner", default-features = false }
planner-macros = { path = "$src/planner-macros" }

[build-dependencies]
planner-build = { path = "$src/planner-build" }
TOML
  echo 'fn main() { planner_build::compile("chain.toml"); }' > "$dir/build.rs"
  cat > "$dir/src/main.rs" <<RS
planner_macros::include_model!("chain$n");

fn main() {
    let m = chain$n::Model::take().map(|m| m.init());
    println!("{}", m.is_some());
}
RS
  # A 2-op chain first, untimed: builds the dependencies the timed builds share.
  if [ "$warm" = 1 ]; then (cd "$dir" && cargo build -q); continue; fi
  # Not incremental, so a rerun measures a full compile of the crate.
  touch "$dir/src/main.rs"
  TIMEFORMAT="%R %U %S"
  if t=$( { time (cd "$dir" && CARGO_INCREMENTAL=0 cargo build -q 2> "$dir/build.log") ; } 2>&1 ); then
    status=ok
  else
    status=failed
  fi
  read -r wall user sys <<< "$(echo "$t" | tail -1)"
  printf 'chain%s: %s, %.1f s wall, %.1f s CPU (%s)\n' "$n" "$status" "$wall" \
    "$(echo "$user + $sys" | bc)" "$dir/build.log"
done
