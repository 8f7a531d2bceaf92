# Shared by the QEMU scripts (qemu.sh, qemu_m4f.sh, docs_firmware.sh, bench_target.sh) and
# boards.sh; sourced, not run. Defines as_root, now, since, die, setup_qemu TARGET,
# need_readelf (sets readelf) and run_qemu_on MACHINE IMAGE (the caller sets `qemu_timeout`,
# in seconds, first), and the firmware steps below.

# Runs a command as root (directly, or through sudo).
as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}
now() { date +%s.%N; }
# Seconds since a `now` stamp, two decimals.
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# Prints "<script>: <message>" on stderr and exits 1.
die() {
    echo "$(basename "$0"): $*" >&2
    exit 1
}

# Installs what the scripts need when missing: Debian's qemu-system-arm and the rustup
# target $1.
setup_qemu() {
    if ! command -v qemu-system-arm >/dev/null 2>&1; then
        echo "== installing qemu-system-arm"
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-system-arm >/dev/null
    fi
    if ! rustup target list --installed | grep -qx "$1"; then
        echo "== adding rust target $1"
        rustup target add "$1"
    fi
}

# Sets readelf to llvm-readelf or binutils' readelf, installing binutils when neither is there.
need_readelf() {
    readelf="$(command -v llvm-readelf || command -v readelf || true)"
    if [ -z "$readelf" ]; then
        echo "== installing binutils (readelf)"
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq binutils >/dev/null
        readelf="$(command -v readelf || true)"
    fi
    [ -n "$readelf" ] || die "neither llvm-readelf nor readelf is installed; install llvm or binutils"
}

# Runs image $2 on QEMU machine $1 with semihosting (its output on stdout), bounded by
# $qemu_timeout seconds (status 124 when QEMU had to be killed).
run_qemu_on() {
    timeout "$qemu_timeout" qemu-system-arm -M "$1" -nographic \
        -semihosting-config enable=on,target=native -kernel "$2" </dev/null
}

# The steps qemu.sh and qemu_m4f.sh share, for the firmware crate examples/$1 built for
# target $2 and run on QEMU machine $3: firmware_init sets fw, target, machine, elf, out and
# qemu_timeout (QEMU_TIMEOUT, default 60), installs what is missing and makes $out.
firmware_init() {
    fw="$root/examples/$1"
    target="$2"
    machine="$3"
    # The firmware's own target directory, or CARGO_TARGET_DIR (CI shares one between the
    # firmware scripts, so the host crates their build scripts use build once).
    elf="${CARGO_TARGET_DIR:-$fw/target}/$target/release/$1"
    out="$fw/target/qemu"
    qemu_timeout="${QEMU_TIMEOUT:-60}"
    setup_qemu "$target"
    echo "== $(qemu-system-arm --version | head -n 1)"
    mkdir -p "$out"
}

# Runs image $1 on the firmware's machine; its semihosting output goes to stdout.
run_qemu() { run_qemu_on "$machine" "$1"; }

# The firmware is outside the workspace, so the workspace's fmt and clippy miss it.
firmware_lint() {
    echo "== fmt and clippy ($(basename "$fw"))"
    (cd "$fw" && cargo fmt --check && nice -n 10 cargo clippy --release --quiet -- -D warnings)
}

# Builds the firmware with the given cargo arguments; prints the build script's OUT_DIR
# (where the plan files and generated sources are).
firmware_build() {
    local package
    package="$(basename "$fw")"
    (cd "$fw" && nice -n 10 cargo build --release --message-format=json-render-diagnostics "$@") |
        sed -n 's/.*"reason":"build-script-executed".*"package_id":"[^"]*'"$package"'[^"]*".*"out_dir":"\([^"]*\)".*/\1/p' |
        tail -n 1
}

# Builds the real firmware into $out/<name>.elf; sets out_dir and build_s.
firmware_build_checked() {
    local name
    name="$(basename "$fw")"
    echo "== build"
    local start
    start="$(now)"
    out_dir="$(firmware_build)"
    build_s="$(since "$start")"
    [ -n "$out_dir" ] || die "cargo reported no OUT_DIR for $name's build script"
    cp "$elf" "$out/$name.elf"
}

# The linked image against the plan (linker script $1): every arena in its planned region,
# at its size and alignment, inside the board's memory.
firmware_elf_check() {
    echo "== ELF check"
    (cd "$root" && cargo run --quiet -p firmware-elf --bin firmware-elf-check -- \
        "$out/$(basename "$fw").elf" --script "$1" --plan-dir "$out_dir/planner")
}

# Runs the real firmware, its output also in $out/<name>.log; exits with its status when
# not 0.
firmware_run() {
    local name start status=0
    name="$(basename "$fw")"
    echo "== run on qemu-system-arm -M $machine"
    start="$(now)"
    # With pipefail, the pipeline's status is QEMU's (tee succeeds).
    run_qemu "$out/$name.elf" | tee "$out/$name.log" || status=$?
    echo "== firmware exit status $status (build ${build_s}s, QEMU run $(since "$start")s)"
    [ "$status" -eq 0 ] || exit "$status"
}

# A self-test: image $out/$1.elf must fail the run, with status 1 and a line matching $2 in
# its output ($out/$1.log); $3 names what it must have reported.
firmware_must_fail() {
    local status=0
    run_qemu "$out/$1.elf" >"$out/$1.log" 2>&1 || status=$?
    cat "$out/$1.log"
    if [ "$status" -ne 1 ] || ! grep -q "$2" "$out/$1.log"; then
        die "$1: expected $3 and exit status 1, got status $status"
    fi
    echo "$1: $3 was reported and QEMU exited with status 1, as it should"
}
