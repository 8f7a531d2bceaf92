//! The `firmware-elf-check` binary's arguments: `--help`, `--region`, and errors that name
//! the fix. The checks themselves are the library's (`src/tests.rs`).

use std::process::{Command, Output};

fn check(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_firmware-elf-check"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn help_is_an_answer_not_an_error() {
    for flag in ["--help", "-h"] {
        let o = check(&[flag]);
        assert!(o.status.success(), "{flag}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        assert!(
            out.contains("usage: firmware-elf-check ELF --script"),
            "{out}"
        );
        assert!(out.contains("--region MEMORY=REGION"), "{out}");
    }
}

#[test]
fn bad_arguments_say_what_to_write() {
    let o = check(&["app.elf", "--frobnicate"]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(e.contains("unknown option --frobnicate"), "{e}");
    assert!(e.contains("--help says more"), "{e}");

    let o = check(&["app.elf", "--script", "memory.x", "--region", "DTCM"]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(e.contains("--region \"DTCM\" is not MEMORY=REGION"), "{e}");

    let o = check(&["--script", "memory.x"]);
    assert!(text(&o.stderr).contains("no ELF given"));

    let o = check(&["/nonexistent/app.elf", "--script", "memory.x"]);
    let e = text(&o.stderr);
    assert!(
        e.contains("cannot read firmware image /nonexistent/app.elf"),
        "{e}"
    );
}
