#!/usr/bin/env bash
# Accept => compile campaign: random manifests (models and groups) from a fixed seed are
# planned with planner-build, and every accepted one must compile under include_model!
# (planner-build/tests/accept_compile.rs); those that plan a real model with random
# in_place, patches, patch_input and schedule must also run with the reference kernels (a
# bundled model on its golden run's input, its output equal to TFLite Micro's).
# Failing manifests are saved, with the error, in $ACCEPT_COMPILE_DIR/failures (default
# target/accept-compile/failures).
#
#   bash scripts/accept_compile.sh            # 200 manifests (about 110 accepted)
#   ACCEPT_COMPILE_COUNT=2000 bash scripts/accept_compile.sh
#   ACCEPT_COMPILE_SEED=7 ACCEPT_COMPILE_BATCH=500 bash scripts/accept_compile.sh
#   ACCEPT_COMPILE_REAL=100 ACCEPT_COMPILE_COUNT=800 bash scripts/accept_compile.sh  # real models only
set -euo pipefail
cd "$(dirname "$0")/.."
export ACCEPT_COMPILE_COUNT="${ACCEPT_COMPILE_COUNT:-200}"
export ACCEPT_COMPILE_SEED="${ACCEPT_COMPILE_SEED:-29}"
export ACCEPT_COMPILE_BATCH="${ACCEPT_COMPILE_BATCH:-250}"
cargo test -p planner-build --features cli --test accept_compile -- --ignored --nocapture
