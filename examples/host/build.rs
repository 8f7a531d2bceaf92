//! Plans hello_world into OUT_DIR, links the example binary with the generated linker
//! fragment (so each arena gets its own output section), and compiles the C kernel against
//! the generated header.

fn main() {
    let out = planner_build::Builder::new()
        .manifest("hello_world.toml")
        // A host has no MEMORY regions: the fragment's sections follow .bss and .rodata.
        .place_in_regions(false)
        .compile();
    let fragment = out.dir.join("planner_hello_world.x");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-bins=-Wl,-T,{}", fragment.display());
    }
    println!("cargo::rerun-if-changed=c/sum.c");
    cc::Build::new()
        .file("c/sum.c")
        .include(&out.dir)
        .warnings_into_errors(true)
        .compile("host_c");
}
