#!/usr/bin/env bash
# The firmware guide's firmware is a test: extracts the code blocks of docs/firmware.md's
# "The five files" section into a fresh crate (each block goes to the file its caption names,
# `Cargo.toml`: ...), replaces the planner crates' crates.io versions by path dependencies on
# this checkout (as the guide says to until they are published), copies the model, builds the
# crate for thumbv8m.main-none-eabihf as written and runs it on QEMU's mps3-an547 board.
# Passes when QEMU exits with status 0, the firmware printed the outputs the guide shows, and
# the guide's ELF check ("## Check the image": cargo install, then firmware-elf-check) passes.
#
# Installs what it needs when missing: Debian's qemu-system-arm, the rustup target.
# QEMU_TIMEOUT (seconds, default 60) bounds the QEMU run. The crate is built in a temporary
# folder (removed at the end; KEEP=1 keeps it) with target directory target/docs-firmware of
# this checkout, so a second run rebuilds only the guide's crate.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
guide="$root/docs/firmware.md"
target=thumbv8m.main-none-eabihf
qemu_timeout="${QEMU_TIMEOUT:-60}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target/docs-firmware}"
# The temporary crate is outside this checkout, where rust-toolchain.toml does not reach:
# build it with the toolchain this checkout pins, the one whose target is checked below.
RUSTUP_TOOLCHAIN="$(cd "$root" && rustup show active-toolchain | cut -d' ' -f1)"
export RUSTUP_TOOLCHAIN

# shellcheck source=lib/qemu_common.sh
source "$root/scripts/lib/qemu_common.sh"
setup_qemu "$target"

crate="$(mktemp -d "${TMPDIR:-/tmp}/docs-firmware.XXXXXX")"
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$crate"' EXIT; fi
echo "== extracting the guide's files into $crate"

# Every fenced block right after a caption line "`path`:" or "`path` (...):" inside the
# section "## The five files" becomes that file. Prints each path written.
awk -v dir="$crate" '
    /^## / { in_section = ($0 == "## The five files") }
    !in_section { next }
    fence != "" {
        if ($0 == "```") { close(out); print name; fence = ""; next }
        print > out
        next
    }
    /^`[^`]+`( \(.*\))?:$/ {
        name = $0
        sub(/^`/, "", name)
        sub(/`.*$/, "", name)
        caption = 1
        next
    }
    caption && /^```/ {
        fence = $0
        out = dir "/" name
        d = out
        sub(/\/[^\/]*$/, "", d)
        system("mkdir -p \"" d "\"")
        printf "" > out
        caption = 0
        next
    }
    NF { caption = 0 }
' "$guide" >"$crate/.files"
cat "$crate/.files"
for f in Cargo.toml .cargo/config.toml build.rs model.toml src/main.rs; do
    [ -s "$crate/$f" ] || die "the guide's \"The five files\" has no block captioned \`$f\`:"
done

# The README's firmware blocks ("## Use it in your firmware") are the guide's, so they run
# as written too: each one must be, byte for byte, a block of the guide's "The five files".
# Writes each fenced block of section $2 of file $1 to $3.N (N = 1, 2, ...).
split_blocks() {
    awk -v heading="$2" -v out="$3" '
        /^## / { in_section = ($0 == heading) }
        !in_section { next }
        /^```/ { if (inside) { print > f; close(f); inside = 0; next } n++; f = out "." n; inside = 1 }
        inside { print > f }
    ' "$1"
}
split_blocks "$root/README.md" "## Use it in your firmware" "$crate/.readme"
split_blocks "$guide" "## The five files" "$crate/.guide"
ls "$crate"/.readme.* >/dev/null 2>&1 || die "README.md has no code block under \"## Use it in your firmware\""
for r in "$crate"/.readme.*; do
    found=0
    for g in "$crate"/.guide.*; do
        if cmp -s "$r" "$g"; then found=1; fi
    done
    [ "$found" -eq 1 ] || die "README.md's firmware block starting \"$(sed -n 2p "$r")\" is not one of the guide's five files: copy it from docs/firmware.md"
done
echo "== README's firmware blocks are the guide's"

# crates.io versions of the planner crates -> this checkout, as the guide says.
dep_lines="$(grep -cE '^planner(-[a-z]+)? = ' "$crate/Cargo.toml" || true)"
[ "$dep_lines" -gt 0 ] || die "the guide's Cargo.toml names no planner crate"
sed -E -i \
    -e 's|^(planner(-[a-z]+)?) = \{ version = "[^"]*"|\1 = { path = "'"$root"'/\1"|' \
    -e 's|^(planner(-[a-z]+)?) = "[^"]*"|\1 = { path = "'"$root"'/\1" }|' \
    "$crate/Cargo.toml"
if grep -E '^planner(-[a-z]+)? = ' "$crate/Cargo.toml" | grep -v 'path = '; then
    die "a planner dependency above is not in a form this script rewrites to a path"
fi
# Outside this checkout's workspace, whatever the temporary folder's parents hold.
printf '\n[workspace]\n' >>"$crate/Cargo.toml"

model="$(sed -n 's/^source = "\(.*\)"$/\1/p' "$crate/model.toml" | head -n 1)"
[ -n "$model" ] || die "the guide's model.toml has no source = \"...\" line"
cp "$root/models/tflm_hello_world_int8.tflite" "$crate/$model"

echo "== build (cargo build --release, as the guide says)"
elf_name="$(sed -n 's/^name = "\(.*\)"$/\1/p' "$crate/Cargo.toml" | head -n 1)"
(cd "$crate" && nice -n 10 cargo build --release)
elf="$CARGO_TARGET_DIR/$target/release/$elf_name"
[ -f "$elf" ] || die "the build wrote no $elf"

echo "== run on qemu-system-arm -M mps3-an547"
status=0
run_qemu_on mps3-an547 "$elf" | tee "$crate/run.log" || status=$?
echo "== the guide's firmware exited with status $status"
[ "$status" -eq 0 ] || die "the guide's firmware did not exit with status 0 under QEMU (status $status; 124: killed by the ${qemu_timeout}s timeout, e.g. a lock-up or a fault)"

# The outputs the guide shows after "prints the model's sin(x)" must be the ones printed.
awk '/prints the model.s sin\(x\)/ { want = 1; next }
    want && /^```text$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }' "$guide" >"$crate/expected.log"
[ -s "$crate/expected.log" ] || die "the guide shows no output after \"prints the model's sin(x)\""
if ! diff <(tr -d '\r' <"$crate/run.log") "$crate/expected.log"; then
    die "the firmware's output (<) differs from the output the guide shows (>)"
fi
# The guide's "Check the image" lines, as written, on the image just built: the install line
# into a folder of this run (from this checkout), the others in the crate's folder, where
# target/ is this run's target directory.
split_blocks "$guide" "## Check the image" "$crate/.check"
[ -s "$crate/.check.1" ] || die "docs/firmware.md has no code block under \"## Check the image\""
grep -q '^cargo install --locked --path tests/firmware-elf' "$crate/.check.1" ||
    die "the guide's \"Check the image\" block does not start with its cargo install line"
echo "== the guide's ELF check: cargo install --path tests/firmware-elf, then its commands"
(cd "$root" && nice -n 10 cargo install --quiet --locked --path tests/firmware-elf --root "$crate/tools")
ln -sfn "$CARGO_TARGET_DIR" "$crate/target"
grep -v '^cargo install ' "$crate/.check.1" | sed '/^```/d' >"$crate/check.sh"
(cd "$crate" && PATH="$crate/tools/bin:$PATH" bash -euo pipefail check.sh) | tee "$crate/check.log"
grep -q "in their planned regions" "$crate/check.log" ||
    die "the guide's ELF check printed no \"in their planned regions\" line"
echo "docs_firmware.sh: the guide's firmware ran on QEMU, exited 0 and printed the $(wc -l <"$crate/expected.log") outputs the guide shows; its ELF check passed"
