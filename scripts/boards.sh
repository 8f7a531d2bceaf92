#!/usr/bin/env bash
# The real-board examples (examples/boards/: NUCLEO-H743ZI, nRF52840-DK, Raspberry Pi Pico 2,
# i.MX RT1060 EVKB), built and checked without a board, as docs/boards.md says to run them:
#
# 1. The chapter's blocks: every fenced block right after a line ending "from the
#    repository's root:" is run from this checkout's root, `cargo run --release` included,
#    with probe-rs's place taken by a stand-in (first on PATH) that keeps the image cargo
#    built and checks it was called as `probe-rs run --chip CHIP ELF`, CHIP being the one the
#    chapter's table gives for that example. Every block captioned "`examples/boards/<file>`:"
#    or "`examples/boards/<file>` (excerpt):" must be a run of whole lines of that file, byte
#    for byte. Every block right after a line
#    ending "prints:" must hold only lines the last-named example's main.rs prints (its
#    `defmt::println!` formats, `{...}` standing for any text), and its scores must be the
#    golden output of the model its build.rs names.
# 2. For each example: `cargo fmt --check` and `cargo clippy --release -- -D warnings` (it is
#    outside the main workspace, which the workspace's fmt and clippy miss).
# 3. For each image: the firmware ELF check (tests/firmware-elf: every arena in its planned
#    region, at its size and alignment, the weights' bytes in flash) and what the chip needs
#    to boot: the vector table at the start of the STM32H743's flash (0x0800_0000) and of the
#    nRF52840's (0x0), the RP2350's IMAGE_DEF block within the flash's first 4 KiB after a
#    vector table at 0x1000_0000, the i.MX RT's FCB tag ("FCFB") at 0x6000_0000 and IVT
#    header (0x402000D1) at 0x6000_1000.
#
# Installs what it needs when missing: the rustup targets (the chapter's `rustup target add`
# line), binutils (readelf). The four examples share one target directory, BOARDS_TARGET_DIR
# (default target/boards of this checkout), so their common dependencies build once; another
# firmware's target directory works too (its host crates, planner-build's, are then reused).
# The ELF check's tool builds in the workspace's target directory (CARGO_TARGET_DIR if set).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
guide="$root/docs/boards.md"
# shellcheck source=lib/qemu_common.sh
source "$root/scripts/lib/qemu_common.sh"
# The ELF check builds its tool in the workspace's own target directory (which qemu.sh and
# the tests have filled): remember it before pointing cargo at the boards' one.
workspace_target="${CARGO_TARGET_DIR:-}"
CARGO_TARGET_DIR="$(mkdir -p "${BOARDS_TARGET_DIR:-$root/target/boards}" && cd "${BOARDS_TARGET_DIR:-$root/target/boards}" && pwd)"
export CARGO_TARGET_DIR
out="$CARGO_TARGET_DIR/boards-check"
rm -rf "$out"
mkdir -p "$out"
all_start="$(now)"

# The examples, each with the ELF check's linker script (relative to its OUT_DIR; the
# i.MX RT's regions are in imxrt-rt's script) and its boot check.
boards=(nucleo-h743zi nrf52840-dk pico2 imxrt1060-evk)
declare -A script=(
    [nucleo-h743zi]=planner/memory.x
    [nrf52840-dk]=planner/memory.x
    [pico2]=planner/memory.x
    [imxrt1060-evk]=imxrt-rt.x
)

need_readelf

# ---- 1. The chapter's blocks ------------------------------------------------------------

# Splits the chapter into $out/blocks/N.{kind,info,body}: kind is run, file:<path>, output or
# plain; info is the board the block belongs to (the last examples/boards/<name> named
# before it, for output blocks).
mkdir -p "$out/blocks"
awk -v dir="$out/blocks" '
    function kind_of(caption) {
        if (caption ~ /[Ff]rom the repository.s root:$/) return "run"
        if (caption ~ /prints:$/) return "output"
        if (match(caption, /^`examples\/boards\/[^`]+`( \(excerpt\))?:$/)) {
            path = caption
            sub(/^`/, "", path)
            sub(/`.*$/, "", path)
            return "file:" path
        }
        return "plain"
    }
    {
        line = $0
        while (match(line, /examples\/boards\/[a-z0-9][a-z0-9-]*/)) {
            name = substr(line, RSTART + 16, RLENGTH - 16)
            if (name != "common") board = name
            line = substr(line, RSTART + RLENGTH)
        }
    }
    inside {
        if ($0 == "```") { close(body); inside = 0; next }
        print > body
        next
    }
    /^```/ {
        n++
        f = sprintf("%s/%03d", dir, n)
        body = f ".body"
        printf "" > body
        print kind_of(last) > (f ".kind")
        print board > (f ".info")
        close(f ".kind")
        close(f ".info")
        inside = 1
        next
    }
    { if (NF) last = $0 }
' "$guide"
blocks=("$out"/blocks/*.kind)
[ -e "${blocks[0]}" ] || die "docs/boards.md has no code blocks"

# Every captioned file block must be a run of whole lines of its file.
files_checked=0
for k in "$out"/blocks/*.kind; do
    n="${k%.kind}"
    kind="$(cat "$k")"
    case "$kind" in
    file:*)
        path="${kind#file:}"
        [ -f "$root/$path" ] || die "docs/boards.md shows a block of $path, which does not exist"
        awk -v want="$n.body" '
            BEGIN { while ((getline l < want) > 0) w[++m] = l }
            { f[++n] = $0 }
            END {
                for (s = 1; s + m - 1 <= n; s++) {
                    ok = 1
                    for (j = 1; j <= m && ok; j++) if (f[s + j - 1] != w[j]) ok = 0
                    if (ok) exit 0
                }
                exit 1
            }
        ' "$root/$path" || {
            sed -n 1,3p "$n.body" >&2
            die "docs/boards.md's block captioned $path (starting above) is not a part of that file: copy it from the file"
        }
        files_checked=$((files_checked + 1))
        ;;
    esac
done
echo "== docs/boards.md: $files_checked file blocks are parts of their files"

# The stand-in for probe-rs, first on PATH: checks that cargo calls it as the examples'
# runner does (`probe-rs run --chip CHIP ELF`), and keeps the image and the chip.
mkdir -p "$out/bin"
cat >"$out/bin/probe-rs" <<EOF
#!/usr/bin/env bash
# Stands in for probe-rs in scripts/boards.sh: keeps the image cargo run would flash.
set -euo pipefail
if [ "\$#" -ne 4 ] || [ "\$1" != run ] || [ "\$2" != --chip ] || [ ! -f "\$4" ]; then
    echo "probe-rs stand-in: expected run --chip CHIP ELF, got: \$*" >&2
    exit 2
fi
cp "\$4" "$out/\$(basename "\$4").elf"
echo "\$3" >"$out/\$(basename "\$4").chip"
echo "probe-rs stand-in: would flash \$4 onto \$3" >&2
EOF
chmod +x "$out/bin/probe-rs"
export PATH="$out/bin:$PATH"

# The run blocks, in order (the chapter's `rustup target add` line first).
ran=0
for k in "$out"/blocks/*.kind; do
    n="${k%.kind}"
    [ "$(cat "$k")" = run ] || continue
    echo "== docs/boards.md, from the repository's root:"
    sed 's/^/   $ /' "$n.body"
    start="$(now)"
    (cd "$root" && nice -n 10 bash -euo pipefail "$n.body") ||
        die "a command block of docs/boards.md failed (above)"
    echo "   ($(since "$start") s)"
    ran=$((ran + 1))
done
for b in "${boards[@]}"; do
    [ -f "$out/$b.elf" ] ||
        die "docs/boards.md runs no \`cargo run --release\` in examples/boards/$b (no image reached the runner)"
    # The chip the runner names must be the one the chapter's table gives.
    chip="$(awk -F'|' -v f="\`$b\`" '/^\|/ {
        for (i = 2; i < NF; i++) {
            c = $i
            gsub(/^ +| +$/, "", c)
            if (c == f) { d = $(NF - 1); gsub(/^ +| +$|`/, "", d); print d; exit }
        }
    }' "$guide")"
    [ -n "$chip" ] || die "docs/boards.md's table has no row for \`$b\`"
    [ "$(cat "$out/$b.chip")" = "$chip" ] ||
        die "examples/boards/$b's runner names chip $(cat "$out/$b.chip"), the chapter's table $chip"
done
echo "== docs/boards.md: $ran command blocks ran; each image reached probe-rs's stand-in with its table's --chip"

# The printed lines: each output block's lines must be formats of its board's main.rs, the
# scores the golden output.
# golden_scores BOARD: the golden output of the model BOARD's build.rs names, as int8 values
# "[a, b, ...]".
golden_scores() {
    local model hex
    model="$(sed -n 's/.*golden::write("\([^"]*\)").*/\1/p' "$root/examples/boards/$1/build.rs")"
    [ -n "$model" ] || die "examples/boards/$1/build.rs names no golden::write(\"<model>\")"
    hex="$(tr -d ' \n' <"$root/tests/run-models/goldens/$model.json" | awk '{
        rest = substr($0, index($0, "\"outputs\":"))
        if (match(rest, /"hex":"[0-9a-f]*"/)) print substr(rest, RSTART + 7, RLENGTH - 8)
    }')"
    [ -n "$hex" ] || die "tests/run-models/goldens/$model.json: no outputs[0].hex"
    echo "$hex" | fold -w2 | awk '{
            v = 16 * (index("0123456789abcdef", substr($0, 1, 1)) - 1) + index("0123456789abcdef", substr($0, 2, 1)) - 1
            if (v > 127) v -= 256
            s = s (NR > 1 ? ", " : "") v
        }
        END { print "[" s "]" }'
}
outputs=0
for k in "$out"/blocks/*.kind; do
    n="${k%.kind}"
    [ "$(cat "$k")" = output ] || continue
    b="$(cat "$n.info")"
    main="$root/examples/boards/$b/src/main.rs"
    [ -f "$main" ] || die "docs/boards.md shows output of \"$b\", which is no example"
    # The format string of every defmt::println! (on its line or the next).
    awk '/defmt::println!\(/ { want = 1 }
        want && match($0, /"[^"]*"/) { print substr($0, RSTART + 1, RLENGTH - 2); want = 0 }' \
        "$main" >"$n.formats"
    scores="$(golden_scores "$b")"
    awk -v scores="$scores" -v fmts="$n.formats" -v board="$b" '
        BEGIN { while ((getline f < fmts) > 0) fmt[++nf] = f }
        # Whether line matches format f, each {...} standing for any text.
        function matches(line, f,   parts, np, i, pos, rest, k) {
            np = split(f, parts, /\{[^}]*\}/)
            if (np == 1) return line == f
            if (substr(line, 1, length(parts[1])) != parts[1]) return 0
            pos = length(parts[1]) + 1
            for (i = 2; i < np; i++) {
                rest = substr(line, pos)
                k = index(rest, parts[i])
                if (k == 0) return 0
                pos += k - 1 + length(parts[i])
            }
            rest = substr(line, pos)
            return length(rest) >= length(parts[np]) && substr(rest, length(rest) - length(parts[np]) + 1) == parts[np]
        }
        {
            ok = 0
            for (i = 1; i <= nf && !ok; i++) ok = matches($0, fmt[i])
            if (!ok) { print "docs/boards.md: \"" $0 "\" is no line examples/boards/" board "/src/main.rs prints" > "/dev/stderr"; bad = 1 }
            if ($0 ~ /scores .* = \[/) {
                got = $0
                sub(/^.* = /, "", got)
                if (got != scores) { print "docs/boards.md: " board " scores " got ", the golden output is " scores > "/dev/stderr"; bad = 1 }
                seen = 1
            }
        }
        END { if (!seen) { print "docs/boards.md: the output of " board " shows no scores line" > "/dev/stderr"; bad = 1 } exit bad }
    ' "$n.body" || die "docs/boards.md's output of $b disagrees with the firmware (above)"
    outputs=$((outputs + 1))
done
[ "$outputs" -ge "${#boards[@]}" ] || die "docs/boards.md shows the output of $outputs examples, not of all ${#boards[@]}"
echo "== docs/boards.md: $outputs output blocks are lines the firmware prints, with the golden scores"

# ---- 2 and 3. Each example: lints, ELF check, boot check ---------------------------------

# section_addr ELF NAME: the address of section NAME, in hex without 0x ("" if none).
section_addr() {
    "$readelf" -SW "$1" | sed 's/^.*\] //' | awk -v s="$2" '$1 == s { print $3 }'
}
# words_at ELF SECTION ADDR COUNT: COUNT words of SECTION from ADDR (hex, 16-byte aligned),
# as readelf shows them (bytes in memory order).
words_at() {
    # Reads to the end: llvm-readelf fails (status 74) when its reader goes away early.
    "$readelf" -x "$2" "$1" | awk -v a="0x$3" -v n="$4" '
        $1 == a && !done { for (i = 2; i <= 5 && i - 1 <= n; i++) s = s (i > 2 ? " " : "") $i; print s; done = 1 }'
}
# boot_check BOARD ELF
boot_check() {
    local addr size words
    case "$1" in
    nucleo-h743zi | nrf52840-dk)
        local want=08000000
        [ "$1" = nrf52840-dk ] && want=00000000
        addr="$(section_addr "$2" .vector_table)"
        [ "$addr" = "$want" ] || die "$1: the vector table is at 0x$addr, not at the start of flash (0x$want), where the core boots"
        echo "boot: vector table at 0x$addr, where the core boots"
        ;;
    pico2)
        addr="$(section_addr "$2" .vector_table)"
        [ "$addr" = 10000000 ] || die "pico2: the vector table is at 0x$addr, not at 0x10000000 (the start of the image)"
        addr="$(section_addr "$2" .start_block)"
        [ -n "$addr" ] || die "pico2: no .start_block section (the IMAGE_DEF block)"
        size="$("$readelf" -SW "$2" | sed 's/^.*\] //' | awk '$1 == ".start_block" { print $5 }')"
        [ $((16#$addr + 16#$size)) -le $((0x10001000)) ] ||
            die "pico2: the IMAGE_DEF block ends at 0x$(printf %x $((16#$addr + 16#$size))), past the flash's first 4 KiB"
        words="$("$readelf" -x .start_block "$2" | awk '/^ *0x/ { for (i = 2; i <= 5; i++) if (length($i) == 8 && $i ~ /^[0-9a-f]+$/) s = s " " $i } END { print substr(s, 2) }')"
        [ "$words" = "d3deffff 42012110 ff010000 00000000 793512ab" ] ||
            die "pico2: the IMAGE_DEF block holds \"$words\", not the five words of main.rs (bytes in memory order)"
        echo "boot: IMAGE_DEF at 0x$addr (in the flash's first 4 KiB), after the vector table at 0x10000000"
        ;;
    imxrt1060-evk)
        addr="$(section_addr "$2" .boot)"
        [ "$addr" = 60000000 ] || die "imxrt1060-evk: the boot header is at 0x$addr, not at the start of flash (0x60000000)"
        words="$(words_at "$2" .boot 60000000 1)"
        [ "$words" = 46434642 ] || die "imxrt1060-evk: flash starts with $words, not the FCB's tag FCFB (46434642)"
        words="$(words_at "$2" .boot 60001000 1)"
        [ "$words" = d1002040 ] || die "imxrt1060-evk: 0x60001000 holds $words, not the IVT header 0x402000D1 (d1002040)"
        echo "boot: FCB (FCFB) at 0x60000000, IVT (0x402000D1) at 0x60001000"
        ;;
    esac
}

for b in "${boards[@]}"; do
    fw="$root/examples/boards/$b"
    echo "== $b"
    start="$(now)"
    firmware_lint
    echo "   (fmt and clippy $(since "$start") s)"
    # A build that changes nothing: its OUT_DIR, where the plan files and scripts are.
    out_dir="$(firmware_build)"
    [ -n "$out_dir" ] || die "cargo reported no OUT_DIR for $b's build script"
    (
        if [ -n "$workspace_target" ]; then export CARGO_TARGET_DIR="$workspace_target"; else unset CARGO_TARGET_DIR; fi
        firmware_elf_check "$out_dir/${script[$b]}"
    )
    boot_check "$b" "$out/$b.elf"
done

echo "boards.sh: the four board examples built, linted and checked in $(since "$all_start") s"
