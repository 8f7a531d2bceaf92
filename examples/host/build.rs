//! Plans hello_world into OUT_DIR, then compiles the C kernel against the generated header.

fn main() {
    let out = planner_build::compile("hello_world.toml");
    println!("cargo::rerun-if-changed=c/sum.c");
    cc::Build::new()
        .file("c/sum.c")
        .include(&out.dir)
        .warnings_into_errors(true)
        .compile("host_c");
}
