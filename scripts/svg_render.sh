#!/usr/bin/env bash
# Renders `planner plan --format svg` in headless Chromium and fails when it does not render:
# the browser's DOM of the file must hold no XML parse error, and its screenshot must differ
# from the screenshot of an empty page of the same size. With `--update-docs`, also copies the
# SVG and its screenshot to docs/memory-map.svg and docs/memory-map.png (the picture in the README and docs/cli.md).
#
# Installs Debian's `chromium` when missing. Usage: bash scripts/svg_render.sh [--update-docs]
# PLANNER_BIN names a `planner` binary already built (CI gives the one `cargo test` built);
# without it the script builds one.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
manifest="${SVG_MANIFEST:-examples/kws/kws.toml}"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}
die() {
    echo "svg_render.sh: $*" >&2
    exit 1
}

browser=""
for b in chromium chromium-browser; do
    if command -v "$b" >/dev/null 2>&1; then browser="$b"; break; fi
done
if [ -z "$browser" ]; then
    echo "== installing chromium"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    browser=chromium
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$root"
planner="${PLANNER_BIN:-}"
if [ -z "$planner" ]; then
    cargo build -q -p planner-build --features cli --bin planner
    planner="$root/target/debug/planner"
fi
[ -x "$planner" ] || die "no planner binary at $planner"
"$planner" plan "$manifest" --format svg >"$work/map.svg"

# The picture's size, from the root element.
width="$(grep -o '<svg [^>]*' "$work/map.svg" | grep -o ' width="[0-9.]*"' | grep -o '[0-9]*' | head -1)"
height="$(grep -o '<svg [^>]*' "$work/map.svg" | grep -o ' height="[0-9.]*"' | grep -o '[0-9]*' | head -1)"
[ -n "$width" ] && [ -n "$height" ] || die "no width/height on the <svg> element"
printf '<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s"/>\n' "$width" "$height" >"$work/blank.svg"

run_browser() {
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$(mktemp -d -p "$work")" "$@" 2>/dev/null
}

run_browser --dump-dom "file://$work/map.svg" >"$work/dom.txt" || die "chromium could not open the SVG"
if grep -qi "parsererror\|error on line" "$work/dom.txt"; then
    grep -i -m3 "error" "$work/dom.txt" >&2
    die "chromium reports an XML error in the SVG"
fi
grep -q 'class="tensor' "$work/dom.txt" || die "chromium's DOM of the SVG has no tensor rectangles"
run_browser --screenshot="$work/map.png" --window-size="$width,$height" "file://$work/map.svg" >/dev/null
run_browser --screenshot="$work/blank.png" --window-size="$width,$height" "file://$work/blank.svg" >/dev/null
[ -s "$work/map.png" ] || die "chromium wrote no screenshot"
head -c 8 "$work/map.png" | od -An -c | grep -q 'P   N   G' || die "the screenshot is not a PNG"
if cmp -s "$work/map.png" "$work/blank.png"; then
    die "the screenshot of the map equals that of an empty page: nothing was drawn"
fi
echo "svg_render.sh: $manifest renders in $("$browser" --version 2>/dev/null | head -1): ${width}x${height}, $(grep -c 'class="tensor' "$work/map.svg") tensors, screenshot $(wc -c <"$work/map.png") bytes (empty page $(wc -c <"$work/blank.png"))"

if [ "${1:-}" = "--update-docs" ]; then
    mkdir -p docs
    cp "$work/map.svg" docs/memory-map.svg
    cp "$work/map.png" docs/memory-map.png
    echo "svg_render.sh: wrote docs/memory-map.svg and docs/memory-map.png"
fi
