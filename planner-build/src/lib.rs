//! `build.rs` helper for the planner: plans a model's memory at build time and writes what
//! `include_model!` and C kernels need into `OUT_DIR`. The `planner` command lives here too,
//! behind the `cli` feature.
//!
//! # Use it in your firmware
//!
//! `build.rs`, with `planner-build` as a build-dependency:
//!
//! ```no_run
//! fn main() {
//!     planner_build::compile("model.toml");
//! }
//! ```
//!
//! That reads the manifest (relative to the crate's `Cargo.toml`), imports the model,
//! plans it and writes, into `$OUT_DIR/planner/`:
//!
//! - `<model>.plan.json`: the versioned plan file `include_model!("<model>")` expands;
//! - `<model>.constant.<memory>.bin`: one weight blob per constant arena, each constant at
//!   its planned offset (repacked: weights in `.tflite` files are often unaligned);
//! - `planner_<model>.x`: a linker-script fragment to `INCLUDE` from cortex-m-rt's
//!   `memory.x`, one output section per arena with `KEEP`, start/end symbols and `ASSERT`s;
//! - `planner_<model>.h`: a C header with each region's size and alignment and each tensor's
//!   region, offset, size and type, and the plan hash.
//!
//! It prints `cargo::rerun-if-changed` for the manifest and the model, `cargo::warning=` for
//! planner warnings (rules that match nothing, spills, staged constants), and
//! `cargo::rustc-env=PLANNER_PLAN_DIR=...` so the macro finds the plan. Files are rewritten
//! only when their bytes change, through a temporary file and a rename, so each is either
//! complete or absent. On error it prints the rendered diagnostic and exits with status 1
//! (no panic, no backtrace).
//!
//! For more control, the [`Builder`]:
//!
//! ```no_run
//! planner_build::Builder::new()
//!     .manifest("model.toml")
//!     .region("SRAM", "RAM") // the memory.x region holding arenas in SRAM
//!     .c_header(false)
//!     .compile();
//! ```
//!
//! [`generate`] is the pure part (manifest and graph in, file bytes out), for tools and
//! tests.
#![deny(missing_docs)]
// The examples are build scripts, whose `fn main` is the point.
#![allow(clippy::needless_doctest_main)]

#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
mod generate;
mod header;
mod linker;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use planner::manifest::{self, ModelSource};
use planner::pack::PlannerKind;
use planner::{Error, import};

pub use generate::{Generated, Options, generate};

/// The environment variable that tells `include_model!` where the plan files are.
pub use planner::planfile::PLAN_DIR_VAR;

/// Plans the model of the manifest at `manifest` (relative to `CARGO_MANIFEST_DIR`) and
/// writes its outputs into `$OUT_DIR/planner`; on error, prints it and exits the build
/// script with status 1. The common case of [`Builder`]; returns where the outputs are
/// (for a build script that also compiles C against the header).
pub fn compile(manifest: impl AsRef<Path>) -> Outputs {
    Builder::new().manifest(manifest).compile()
}

/// Configures and runs the planner from a build script.
#[derive(Debug, Clone)]
pub struct Builder {
    manifest: Option<PathBuf>,
    planner: Option<PlannerKind>,
    out_dir: Option<PathBuf>,
    options: Options,
    cargo: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// What a run produced: where the files are and what changed.
#[derive(Debug, Clone)]
pub struct Outputs {
    /// The directory holding the outputs (what `PLANNER_PLAN_DIR` names).
    pub dir: PathBuf,
    /// Every output file, with `true` when this run rewrote it.
    pub files: BTreeMap<PathBuf, bool>,
    /// The plan hash.
    pub plan_hash: u64,
    /// The planner's warnings.
    pub warnings: Vec<String>,
    /// Files the run read (manifest and model), for `rerun-if-changed`.
    pub inputs: Vec<PathBuf>,
}

impl Builder {
    /// A builder with the defaults: every output, cargo directives on.
    pub fn new() -> Builder {
        Builder {
            manifest: None,
            planner: None,
            out_dir: None,
            options: Options::default(),
            cargo: true,
        }
    }

    /// The manifest; relative paths are relative to `CARGO_MANIFEST_DIR` (or the current
    /// directory outside cargo).
    pub fn manifest(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.manifest = Some(path.as_ref().to_path_buf());
        self
    }

    /// Packs with `planner` instead of the manifest's `memory.planner`.
    pub fn planner(&mut self, planner: PlannerKind) -> &mut Self {
        self.planner = Some(planner);
        self
    }

    /// Writes into `dir` instead of `$OUT_DIR/planner`.
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Whether to write the linker-script fragment (default: yes).
    pub fn linker_fragment(&mut self, on: bool) -> &mut Self {
        self.options.linker_fragment = on;
        self
    }

    /// Whether to write the C header (default: yes).
    pub fn c_header(&mut self, on: bool) -> &mut Self {
        self.options.c_header = on;
        self
    }

    /// Places arenas of `memory` in the linker region `region` (default: the memory's own
    /// name), for `memory.x` files whose regions are named otherwise (`RAM`).
    pub fn region(&mut self, memory: &str, region: &str) -> &mut Self {
        self.options
            .regions
            .insert(memory.to_string(), region.to_string());
        self
    }

    /// Whether the linker fragment places each section in its memory's region (default:
    /// yes). Turn it off to link the fragment into a host program, whose default linker
    /// script has no `MEMORY` regions: the sections then follow `.bss` and `.rodata`.
    pub fn place_in_regions(&mut self, on: bool) -> &mut Self {
        self.options.place_in_regions = on;
        self
    }

    /// Whether to print `cargo::` directives (default: yes; turn off outside build
    /// scripts).
    pub fn cargo_directives(&mut self, on: bool) -> &mut Self {
        self.cargo = on;
        self
    }

    /// Runs, and on error prints the rendered error and exits with status 1: a failed plan
    /// fails the build with its message and no panic backtrace.
    pub fn compile(&self) -> Outputs {
        match self.try_compile() {
            Ok(out) => out,
            Err(e) => {
                let text = e.to_string();
                if self.cargo {
                    let mut lines = text.lines();
                    if let Some(first) = lines.next() {
                        println!("cargo::error=planner: {first}");
                    }
                    for line in lines {
                        println!("cargo::error={line}");
                    }
                }
                eprintln!("error: {text}");
                std::process::exit(1);
            }
        }
    }

    /// Runs and returns the error instead of exiting.
    pub fn try_compile(&self) -> Result<Outputs, Error> {
        let base = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        let manifest_path = self.manifest.as_ref().ok_or_else(|| {
            Error::invalid_input(
                "no manifest given; call planner_build::compile(\"model.toml\") or Builder::manifest",
            )
        })?;
        let manifest_path = base.join(manifest_path);
        let out_dir = match &self.out_dir {
            Some(d) => base.join(d),
            None => match std::env::var_os("OUT_DIR") {
                Some(d) => PathBuf::from(d).join("planner"),
                None => {
                    return Err(Error::invalid_input(
                        "OUT_DIR is not set, so this is not a build script; set Builder::out_dir",
                    ));
                }
            },
        };
        let mut inputs = vec![manifest_path.clone()];
        // Print before reading, so a manifest with an error is watched too.
        self.directive(&format!("rerun-if-changed={}", manifest_path.display()));
        let mut manifest = manifest::load(&manifest_path)?;
        if let Some(p) = &self.planner {
            manifest.planner = p.clone();
        }
        if let ModelSource::File(model) = &manifest.source {
            self.directive(&format!("rerun-if-changed={}", model.display()));
            inputs.push(model.clone());
        }
        let graph = import::load(&manifest)?;
        let planned = planner::plan_graph(&manifest, &graph)?;
        let generated = generate(&manifest, &planned, &self.options)?;
        let files = write::write_all(&out_dir, &generated.files)?;
        for w in &generated.warnings {
            self.directive(&format!("warning=planner: {w}"));
        }
        self.directive(&format!("rustc-env={PLAN_DIR_VAR}={}", out_dir.display()));
        Ok(Outputs {
            dir: out_dir,
            files,
            plan_hash: generated.plan_hash,
            warnings: generated.warnings,
            inputs,
        })
    }

    fn directive(&self, d: &str) {
        if self.cargo {
            // A directive is one line: a newline in a path or message would end it early.
            println!("cargo::{}", d.replace(['\n', '\r'], " "));
        }
    }
}
