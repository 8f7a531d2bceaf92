//! What links: a plan whose arenas pass what the target's linker reaches is refused at plan
//! time, and the largest plan accepted for the host links (checked with rustc on statics of
//! the plan's sizes: `.bss` only, so no disk is written for them).

use std::path::{Path, PathBuf};

fn out(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("planner-link-{}-{name}", std::process::id()))
}

/// Two scratch arenas, SRAM and DDR, of `a` and `b` bytes.
fn two_arenas(name: &str, a: u64, b: u64) -> PathBuf {
    let p = out(&format!("{name}.toml"));
    std::fs::write(
        &p,
        format!(
            r#"[model]
name = "big"
tensors = [
  {{ id = "a", dtype = "u8", size = {a} }},
  {{ id = "b", dtype = "u8", size = {b} }},
  {{ id = "c", dtype = "u8", size = 1 }},
]
ops = [
  {{ opcode = "ADD", inputs = ["a"], outputs = ["b"] }},
  {{ opcode = "ADD", inputs = ["b"], outputs = ["c"] }},
]
[platform]
memories = [ {{ name = "SRAM", writable = true }}, {{ name = "DDR", writable = true }} ]
min_alignment = 1
[memory]
tensors = [ {{ type = "scratch", id = "a", attributes = {{ memory = "SRAM" }} }}, {{ type = "scratch", id = "b", attributes = {{ memory = "DDR" }} }} ]
"#
        ),
    )
    .unwrap();
    p
}

fn build(manifest: &Path, target: &str) -> Result<planner_build::Outputs, planner::Error> {
    planner_build::Builder::new()
        .manifest(manifest)
        .out_dir(out(&format!(
            "{}-{target}-out",
            manifest.file_stem().unwrap().to_string_lossy()
        )))
        .cargo_directives(false)
        .target(target)
        .try_compile()
}

const X86: &str = "x86_64-unknown-linux-gnu";

#[test]
fn arenas_past_what_links_are_refused_per_target() {
    let max = planner_build::target::link_limit(X86).max_total;
    // SRAM holds a, and c where a was (c lives after a ends); DDR holds b.
    let over = two_arenas("over", max / 2 + 1, max / 2);
    let e = build(&over, X86).unwrap_err();
    let m = e.message();
    assert!(
        m.contains(&format!(
            "take {} bytes of statics (scratch.SRAM {} bytes, scratch.DDR {} bytes), more than links on target x86_64-unknown-linux-gnu: x86_64's default (small) code model",
            max + 1,
            max / 2 + 1,
            max / 2
        )),
        "{m}"
    );
    assert!(m.contains(&format!("at most {max} bytes of arenas")), "{m}");
    // A 32-bit target has twice the room: the same plan passes there.
    build(&over, "thumbv8m.main-none-eabihf").unwrap();
    // The reproducer's two 1.5 GiB arenas.
    let repro = two_arenas("repro", 1536 << 20, 1536 << 20);
    assert!(build(&repro, X86).is_err());
    build(&repro, "thumbv7em-none-eabihf").unwrap();
    assert!(build(&repro, "riscv64gc-unknown-linux-gnu").is_err());
}

/// The largest plan accepted for x86_64 links: statics of its arenas' sizes, next to the
/// standard library's, in a program rustc builds and runs.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[test]
fn the_largest_accepted_plan_links_on_the_host() {
    let max = planner_build::target::link_limit(X86).max_total;
    let fits = two_arenas("fits", max / 2, max / 2);
    let outputs = build(&fits, X86).unwrap();
    let plan = std::fs::read_to_string(outputs.dir.join("big.plan.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&plan).unwrap();
    let sizes: Vec<u64> = v["arenas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["size"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes.iter().sum::<u64>(), max, "{sizes:?}");
    let mut src = String::from(
        "use std::cell::UnsafeCell;\nstruct A<const N: usize>(UnsafeCell<[u8; N]>);\n// SAFETY: one thread touches them.\nunsafe impl<const N: usize> Sync for A<N> {}\n",
    );
    let mut body = String::new();
    for (k, n) in sizes.iter().enumerate() {
        src.push_str(&format!(
            "static S{k}: A<{n}> = A(UnsafeCell::new([0; {n}]));\n"
        ));
        body.push_str(&format!(
            "    // SAFETY: the last byte of S{k}, touched by this thread only.\n    unsafe {{ let p = S{k}.0.get().cast::<u8>().add({n} - 1); p.write_volatile({k}); sum += u32::from(p.read_volatile()); }}\n"
        ));
    }
    src.push_str(&format!(
        "fn main() {{\n    let mut sum = 0u32;\n{body}    println!(\"{{sum}}\");\n}}\n"
    ));
    let dir = out("rustc");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("m.rs"), src).unwrap();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let status = std::process::Command::new(rustc)
        .args(["--edition", "2021", "-O", "m.rs", "-o", "m"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let run = std::process::Command::new(dir.join("m")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "1\n");
    std::fs::remove_dir_all(&dir).unwrap();
}
