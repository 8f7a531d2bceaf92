//! Puts `memory.x` where the linker finds it (cortex-m-rt's `link.x` does `INCLUDE memory.x`).

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts"));
    let memory_x = fs::read("memory.x").expect("memory.x is next to build.rs");
    fs::write(out.join("memory.x"), memory_x).expect("OUT_DIR is writable");
    println!("cargo::rustc-link-search={}", out.display());
    println!("cargo::rerun-if-changed=memory.x");
    println!("cargo::rerun-if-changed=build.rs");
}
