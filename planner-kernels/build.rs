//! Picks the optimized kernels' inner loops for the target: `planner_mve` (Helium, Arm's
//! M-profile Vector Extension: Cortex-M55, Cortex-M85), `planner_dsp` (the DSP extension's
//! dual 16-bit multiply-accumulate: Cortex-M4, M7, M33, M35P, M55, M85), `planner_sse2`
//! (x86-64, whose every CPU has SSE2), or none (the portable Rust, which LLVM vectorises on
//! other targets).
//!
//! Rust's `cfg(target_feature = "mve")` and `"dsp"` are unstable on Arm, so this script reads
//! what the build asks of the compiler: the target (`thumbv7em-*` always has the DSP
//! extension) and `-C target-cpu=...` / `-C target-feature=...` in the encoded rustflags.
//! `PLANNER_KERNELS_PORTABLE=1` forces the portable loops (to measure them, or to rule the
//! assembly out when chasing a difference).

use std::env;

/// CPUs with Helium (they have the DSP extension too).
const MVE_CPUS: [&str; 2] = ["cortex-m55", "cortex-m85"];
/// CPUs with the DSP extension and no Helium.
const DSP_CPUS: [&str; 5] = [
    "cortex-m4",
    "cortex-m7",
    "cortex-m33",
    "cortex-m35p",
    "star-mc1",
];

fn main() {
    println!("cargo::rustc-check-cfg=cfg(planner_mve)");
    println!("cargo::rustc-check-cfg=cfg(planner_dsp)");
    println!("cargo::rustc-check-cfg=cfg(planner_v8m)");
    println!("cargo::rustc-check-cfg=cfg(planner_sse2)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=PLANNER_KERNELS_PORTABLE");
    if env::var_os("PLANNER_KERNELS_PORTABLE").is_some_and(|v| v != "0") {
        return;
    }
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if arch == "x86_64" {
        println!("cargo::rustc-cfg=planner_sse2");
    }
    if arch != "arm" {
        return;
    }
    let target = env::var("TARGET").unwrap_or_default();
    let mut dsp = target.starts_with("thumbv7em");
    let mut mve = false;
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let flags: Vec<&str> = flags.split('\u{1f}').collect();
    // `-C x=y`, `-Cx=y` and `--codegen x=y`, in order: a later flag overrides an earlier one.
    let mut codegen = Vec::new();
    let mut it = flags.iter().peekable();
    while let Some(f) = it.next() {
        if let Some(rest) = f.strip_prefix("-C").filter(|r| !r.is_empty()) {
            codegen.push(rest.to_string());
        } else if *f == "-C" || *f == "--codegen" {
            if let Some(next) = it.next() {
                codegen.push(next.to_string());
            }
        } else if let Some(rest) = f.strip_prefix("--codegen=") {
            codegen.push(rest.to_string());
        }
    }
    for c in &codegen {
        if let Some(cpu) = c.strip_prefix("target-cpu=") {
            mve = MVE_CPUS.contains(&cpu);
            dsp = mve || DSP_CPUS.contains(&cpu) || target.starts_with("thumbv7em");
        } else if let Some(features) = c.strip_prefix("target-feature=") {
            for f in features.split(',') {
                match f {
                    "+mve" | "+mve.fp" => {
                        mve = true;
                        dsp = true;
                    }
                    "-mve" | "-mve.fp" => mve = false,
                    "+dsp" => dsp = true,
                    "-dsp" => {
                        dsp = false;
                        mve = false;
                    }
                    _ => {}
                }
            }
        }
    }
    if mve {
        println!("cargo::rustc-cfg=planner_mve");
    }
    if dsp {
        println!("cargo::rustc-cfg=planner_dsp");
        if target.starts_with("thumbv8m") {
            println!("cargo::rustc-cfg=planner_v8m");
        }
    }
}
