//! The `planner` command: plan, explain and compare memory plans from the shell.

use std::sync::atomic::{AtomicBool, Ordering};

/// Descriptor 1 was closed when the process was loaded (`planner plan m.tflite >&-`).
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Looks whether descriptor 1 is open, before the Rust runtime opens `/dev/null` in its place
/// (it does for a closed 0, 1 or 2, and from then on every write "succeeds"). Duplicating the
/// descriptor fails with EBADF when it is closed; the duplicate, if made, is closed again.
/// Never panics: it runs before `main`, where a panic could not unwind.
#[cfg(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_vendor = "apple"
))]
extern "C" fn look_at_stdout() {
    use std::os::fd::AsFd as _;
    if std::io::stdout().as_fd().try_clone_to_owned().is_err() {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// Runs [`look_at_stdout`] when the program is loaded, before the runtime's start-up code.
/// On other systems the check is skipped, and a closed standard output reads as `/dev/null`.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
#[used]
// SAFETY: `.init_array` holds pointers to functions the loader calls, in order, before
// `main`, with (argc, argv, envp), which a C function of no arguments may ignore; the entry
// is a plain `extern "C" fn()` that touches only an atomic and the descriptor table.
#[unsafe(link_section = ".init_array")]
static LOOK_AT_STDOUT: extern "C" fn() = look_at_stdout;

/// As [`LOOK_AT_STDOUT`], for Mach-O's list of initialisers.
#[cfg(target_vendor = "apple")]
#[used]
// SAFETY: `__DATA,__mod_init_func` holds pointers to functions dyld calls before `main`,
// with arguments a C function of no arguments may ignore; see `LOOK_AT_STDOUT` above.
#[unsafe(link_section = "__DATA,__mod_init_func")]
static LOOK_AT_STDOUT_APPLE: extern "C" fn() = look_at_stdout;

fn main() -> std::process::ExitCode {
    planner_build::cli::main_with(STDOUT_CLOSED.load(Ordering::Relaxed))
}
