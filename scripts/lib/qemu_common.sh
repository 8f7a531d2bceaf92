# Shared by the QEMU scripts (qemu.sh, qemu_m4f.sh, docs_firmware.sh); sourced, not run.
# Defines as_root, now, since, die, setup_qemu TARGET and run_qemu MACHINE IMAGE; the caller
# sets `qemu_timeout` (seconds) before calling run_qemu.

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

# Runs image $2 on QEMU machine $1 with semihosting (its output on stdout), bounded by
# $qemu_timeout seconds (status 124 when QEMU had to be killed).
run_qemu_on() {
    timeout "$qemu_timeout" qemu-system-arm -M "$1" -nographic \
        -semihosting-config enable=on,target=native -kernel "$2" </dev/null
}
