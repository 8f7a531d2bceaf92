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
//! A group manifest (`[[model]]` tables, see `planner::manifest::Group`) is planned as one
//! group and writes `<group>.plan.json` (every model's plan inside, over the group's shared
//! arenas), `<group>.constant.<memory>.bin` per constant arena, `planner_<group>.x` (one
//! section per group arena) and `planner_<model>.h` per model; `include_model!("<group>")`
//! expands it. Memories whose constraint says `app_bound = true` get no section in the
//! fragment: the application binds those arenas (`Handle::from_buffers`).
//!
//! It prints `cargo::rerun-if-changed` for the manifest and the model, `cargo::warning=` for
//! planner warnings (rules that match nothing, spills, staged constants), and
//! `cargo::rustc-env=PLANNER_PLAN_DIR=...` so the macro finds the plan. Files are rewritten
//! only when their bytes change, through a temporary file and a rename, so each is either
//! complete or absent. Two manifests compiled by one build script that would write the same
//! file (a model named like a group, or like one of a group's models) are an error naming
//! both, and the second writes nothing. On error it prints the rendered diagnostic and exits
//! with status 1 (no panic, no backtrace).
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

#[doc(hidden)]
pub mod c_names;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
mod escape;
mod generate;
mod header;
mod linker;
mod memory_x;
pub mod target;
mod unit_plan;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use planner::manifest::{self, Manifest, ModelSource};
use planner::pack::PlannerKind;
use planner::{Error, import};

pub use generate::{Generated, GeneratedGroup, Options, generate, generate_group};
pub use memory_x::MemoryXLayout;

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
    check_memory_x: Option<PathBuf>,
    target: Option<String>,
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

/// `Builder` methods that turn one output or behaviour on or off: each sets its field to
/// `on` and returns the builder.
macro_rules! switches {
    ($($(#[$doc:meta])* $name:ident => $($field:ident).+;)+) => {
        $(
            $(#[$doc])*
            pub fn $name(&mut self, on: bool) -> &mut Self {
                self.$($field).+ = on;
                self
            }
        )+
    };
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
            check_memory_x: None,
            target: None,
        }
    }

    /// The target triple whose link limits the plan's statics must meet (default: cargo's
    /// `TARGET`, else the host): see [`target::link_limit`].
    pub fn target(&mut self, triple: impl Into<String>) -> &mut Self {
        self.target = Some(triple.into());
        self
    }

    fn link_limit(&self) -> target::LinkLimit {
        target::link_limit(&self.target.clone().unwrap_or_else(target::current_target))
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

    switches! {
        /// Whether to write the linker-script fragment (default: yes).
        linker_fragment => options.linker_fragment;
        /// Whether to write the C header (default: yes).
        c_header => options.c_header;
        /// Whether the linker fragment places each section in its memory's region (default:
        /// yes). Turn it off to link the fragment into a host program, whose default linker
        /// script has no `MEMORY` regions: the sections then follow `.bss` and `.rodata`.
        place_in_regions => options.place_in_regions;
        /// Also draw the plan as `<model>.svg` beside the plan file (default: no): one panel
        /// per arena, x = op, y = offset, one rectangle per tensor. For a group, also
        /// `<group>.svg`: one panel per group arena, the models side by side, each model's
        /// block outlined.
        svg => options.svg;
        /// Whether to print `cargo::` directives (default: yes; turn off outside build
        /// scripts).
        cargo_directives => cargo;
    }

    /// Places arenas of `memory` in the linker region `region` (default: the memory's own
    /// name), for `memory.x` files whose regions are named otherwise (`RAM`).
    pub fn region(&mut self, memory: &str, region: &str) -> &mut Self {
        self.options
            .regions
            .insert(memory.to_string(), region.to_string());
        self
    }

    /// Writes `memory.x` into the output directory from the manifest's memories (each
    /// with its `origin` and `size`), memory `flash` as cortex-m-rt's `FLASH` region and
    /// `ram` as its `RAM` (stack, `.data`, `.bss`), the others under their own names, and
    /// `INCLUDE`s the linker fragment; the directory is on the linker's search path, so
    /// `-Tlink.x` finds it. The sizes are then written once, in the manifest.
    pub fn write_memory_x(&mut self, flash: &str, ram: &str) -> &mut Self {
        self.options.memory_x = Some(MemoryXLayout {
            flash: flash.to_string(),
            ram: ram.to_string(),
        });
        self
    }

    /// Checks a hand-written `memory.x` (relative to `CARGO_MANIFEST_DIR`) against the
    /// manifest: each memory holding an arena must be a region (named as [`Builder::region`]
    /// maps it) with the manifest's origin and size, or the build fails with both figures.
    pub fn check_memory_x(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.check_memory_x = Some(path.as_ref().to_path_buf());
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
                        emit(
                            &mut std::io::stdout(),
                            &format!("cargo::error=planner: {first}"),
                        );
                    }
                    for line in lines {
                        emit(&mut std::io::stdout(), &format!("cargo::error={line}"));
                    }
                }
                emit(&mut std::io::stderr(), &format!("error: {text}"));
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
        // A `[group]` table or `[[model]]` tables make a group (even of one model); a
        // `[model]` table a unit of one. Both plan through one call.
        let is_group = manifest::lists_models(&manifest_path)?;
        let mut group = if is_group {
            manifest::load_group(&manifest_path)?
        } else {
            manifest::Group::single(manifest::load(&manifest_path)?)
        };
        for m in &mut group.models {
            if let Some(p) = &self.planner {
                m.planner = p.clone();
            }
            if let ModelSource::File(model) = &m.source {
                self.directive(&format!("rerun-if-changed={}", model.display()));
                inputs.push(model.clone());
            }
        }
        let graphs = group
            .models
            .iter()
            .map(import::load)
            .collect::<Result<Vec<_>, Error>>()?;
        let mut planned = planner::plan_unit(&planner::Unit::of(&group, &graphs))?;
        let Some(first) = group.models.first() else {
            return Err(Error::invalid_input(format!(
                "group {} in {} lists no model; add a [[model]] table",
                group.name,
                manifest_path.display()
            )));
        };
        if is_group {
            let generated = generate::generate_group(&group, &planned, &self.options)?;
            return self.conclude(&base, &manifest_path, &out_dir, first, generated, inputs);
        }
        let model = planned.models.pop().ok_or_else(|| {
            Error::invalid_input(format!(
                "internal planner error: model {} planned as a unit of one has no plan; please report it",
                first.name
            ))
        })?;
        let generated = generate(first, &model, &self.options)?;
        self.conclude(&base, &manifest_path, &out_dir, first, generated, inputs)
    }

    /// What a model's and a group's build do after planning, the same for both: checks the
    /// statics against the target's link limit and `memory.x` (when asked) against
    /// `manifest` (a group's first model), writes the files and says where they are.
    fn conclude<P: unit_plan::UnitPlan>(
        &self,
        base: &Path,
        manifest_path: &Path,
        out_dir: &Path,
        manifest: &Manifest,
        generated: Generated<P>,
        mut inputs: Vec<PathBuf>,
    ) -> Result<Outputs, Error> {
        let plan = &generated.plan;
        target::check(
            plan.arena_entries().into_iter(),
            &plan.owner(),
            manifest_path,
            &self.link_limit(),
        )?;
        if let Some(p) = &self.check_memory_x {
            let path = base.join(p);
            self.directive(&format!("rerun-if-changed={}", path.display()));
            let text = memory_x::read(&path)?;
            let used = generate::used_memories(plan);
            memory_x::check(manifest, &self.options.regions, &text, &path, &used)?;
            inputs.push(path);
        }
        let files = self.finish(
            manifest_path,
            out_dir,
            &generated.files,
            &generated.warnings,
        )?;
        Ok(Outputs {
            dir: out_dir.to_path_buf(),
            files,
            plan_hash: generated.plan_hash,
            warnings: generated.warnings,
            inputs,
        })
    }

    /// Writes the outputs (only changed files, each whole or not at all) and prints the
    /// directives that point cargo and the macro at them.
    fn finish(
        &self,
        manifest_path: &Path,
        out_dir: &Path,
        files: &BTreeMap<String, Vec<u8>>,
        warnings: &[String],
    ) -> Result<BTreeMap<PathBuf, bool>, Error> {
        claim(manifest_path, out_dir, files.keys())?;
        let written = write::write_all(out_dir, files)?;
        if self.options.linker_fragment || self.options.memory_x.is_some() {
            // memory.x and the fragment it INCLUDEs are found on the search path.
            self.directive(&format!("rustc-link-search={}", out_dir.display()));
        }
        for w in warnings {
            self.directive(&format!("warning=planner: {w}"));
        }
        self.directive(&format!("rustc-env={PLAN_DIR_VAR}={}", out_dir.display()));
        Ok(written)
    }

    fn directive(&self, d: &str) {
        if self.cargo {
            // A directive is one line: a newline in a path or message would end it early.
            emit(
                &mut std::io::stdout(),
                &format!("cargo::{}", d.replace(['\n', '\r'], " ")),
            );
        }
    }
}

/// Writes one line to `out`, ignoring a failure: `println!` would panic on a closed stream
/// (a build script run by hand and piped to `head`), and the exit code says what happened.
fn emit(out: &mut impl std::io::Write, line: &str) {
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// Which manifest wrote each output file in this process: a build script is one process,
/// and two `compile` calls writing the same file into one `OUT_DIR` would leave only the
/// last one's, which `include_model!` would then expand for both.
static CLAIMS: Mutex<BTreeMap<PathBuf, PathBuf>> = Mutex::new(BTreeMap::new());

/// Records `manifest` as the writer of `names` in `out_dir`, or fails, writing nothing, when
/// another manifest compiled by this build script wrote one of them (a model and a group, or
/// a model and a group's model, with the same name). The same manifest compiled again is
/// fine.
fn claim<'a>(
    manifest: &Path,
    out_dir: &Path,
    names: impl Iterator<Item = &'a String> + Clone,
) -> Result<(), Error> {
    let mut claims = CLAIMS.lock().unwrap_or_else(|e| e.into_inner());
    for name in names.clone() {
        if let Some(other) = claims.get(&out_dir.join(name))
            && other != manifest
        {
            return Err(Error::invalid_input(format!(
                "{} and {} both write `{name}` into {}: the second would replace the first's, and \
                 include_model! would expand the second's for both; give one of the models (or the group) \
                 another `name`",
                other.display(),
                manifest.display(),
                out_dir.display()
            )));
        }
    }
    for name in names {
        claims.insert(out_dir.join(name), manifest.to_path_buf());
    }
    Ok(())
}
