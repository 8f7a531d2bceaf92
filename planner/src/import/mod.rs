//! Import: turn a model file into the [`crate::graph::Graph`] the rest of the pipeline
//! reads.
//!
//! One submodule per input format, each with a `read(path)` entry that returns a validated
//! graph:
//!
//! - [`tflite`]: TensorFlow Lite flatbuffers (`.tflite`), main subgraph.
//! - [`csv`]: MiniMalloc's offset-assignment CSV (`id,lower,upper,size[,offset]`).
//! - `inline`: the graph a manifest describes in `model.tensors` and `model.ops`.
//!
//! [`FORMATS`] is the one registry of input files by extension; the `planner` command and
//! [`load`] both dispatch through it ([`format_of`]).

pub mod csv;
pub(crate) mod inline;
pub(crate) use crate::limited;
pub mod tflite;

/// Size-limited reads of the inputs, shared with `planner-build`.
#[doc(hidden)]
pub use limited::{MAX_LINKER_SCRIPT, MAX_MANIFEST, read_flatbuffer, read_text};

use std::path::Path;
use std::string::String;
use std::vec::Vec;

use crate::error::{Error, Result};
use crate::graph::{DType, Graph, Tensor, TensorKind};
use crate::manifest::{Manifest, ModelSource};
use crate::plan::ArenaRole;

/// What an input file is.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum FormatKind {
    /// A manifest (`.toml`).
    Manifest,
    /// A model file, read into a [`Graph`].
    Model(fn(&Path) -> Result<Graph>),
    /// A MiniMalloc offset-assignment problem.
    Problem,
}

/// One input format: its extension, what it is, and how it is read.
#[derive(Debug, Clone, Copy)]
pub struct Format {
    /// Lowercase extension without the dot.
    pub extension: &'static str,
    /// What it is, for messages (`a model`).
    pub what: &'static str,
    /// How it is read.
    pub kind: FormatKind,
}

/// Every input format the planner reads.
pub const FORMATS: &[Format] = &[
    Format {
        extension: "toml",
        what: "a manifest",
        kind: FormatKind::Manifest,
    },
    Format {
        extension: "tflite",
        what: "a model",
        kind: FormatKind::Model(tflite::read),
    },
    Format {
        extension: "csv",
        what: "a MiniMalloc problem",
        kind: FormatKind::Problem,
    },
];

/// The format of `path`, by its extension (case-insensitive).
pub fn format_of(path: &Path) -> Result<&'static Format> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    FORMATS.iter().find(|f| f.extension == ext).ok_or_else(|| {
        let known: Vec<String> = FORMATS
            .iter()
            .map(|f| format!("{} (.{})", f.what, f.extension))
            .collect();
        Error::input(format!(
            "{} has extension {ext:?}, which the planner cannot read",
            path.display()
        ))
        .help(format!("give {}", known.join(", ")))
    })
}

/// The graph a manifest names: its inline graph, or the model file it points at (by
/// extension, through [`FORMATS`]). The graph takes the manifest's model name.
pub fn load(manifest: &Manifest) -> Result<Graph> {
    let mut graph = match &manifest.source {
        ModelSource::Inline(m) => inline::read(m, &manifest.name)?,
        ModelSource::Graph(g) => (**g).clone(),
        ModelSource::File(path) => read_model_file(path, &manifest.path)?,
    };
    graph.name = manifest.name.clone();
    add_slabs(manifest, &mut graph)?;
    check_zero_constants(manifest, &graph)?;
    Ok(graph)
}

/// Constants given by size alone are zero-filled blobs compiled into the firmware: above
/// `memory.max_zero_constants` bytes in all, an error that says how to raise it, instead of
/// writing and compiling a blob of hundreds of megabytes of zeros.
fn check_zero_constants(manifest: &Manifest, graph: &Graph) -> Result<()> {
    let zero = graph
        .tensors
        .iter()
        .filter(|t| t.kind == TensorKind::Constant && t.data.is_none());
    let total = zero.clone().fold(0u64, |a, t| a.saturating_add(t.size));
    if total <= manifest.max_zero_constants {
        return Ok(());
    }
    let largest = zero.max_by_key(|t| t.size);
    Err(Error::input(format!(
        "model {} has {total} bytes of constants given by size alone (zero-filled), more than memory.max_zero_constants = {}{}",
        manifest.name,
        manifest.max_zero_constants,
        largest.map_or(String::new(), |t| format!("; the largest is `{}` with {} bytes", t.id, t.size))
    ))
    .help(format!(
        "give the constants their `data` files, or set `max_zero_constants = {total}` in [memory] to build the zero-filled blob"
    )))
}

/// Appends one `u8` tensor per step-scope slab of the manifest (`memory.slabs`).
fn add_slabs(manifest: &Manifest, graph: &mut Graph) -> Result<()> {
    for slab in &manifest.slabs {
        let id = slab.tensor_id();
        if graph.find(&id).is_some() {
            return Err(Error::input(format!(
                "slab `{}` takes tensor id `{id}`, which model {} already uses",
                slab.name, manifest.name
            ))
            .help("rename the slab in memory.slabs"));
        }
        graph.tensors.push(Tensor {
            id,
            name: slab.name.clone(),
            dtype: DType::U8,
            shape: vec![slab.size],
            size: slab.size,
            kind: if slab.role == ArenaRole::Persistent {
                TensorKind::Variable
            } else {
                TensorKind::Activation
            },
            quantization: None,
            align_hint: slab.alignment,
            data: None,
        });
    }
    if !manifest.slabs.is_empty() {
        graph.validate()?;
    }
    Ok(())
}

fn read_model_file(path: &Path, manifest: &Path) -> Result<Graph> {
    match format_of(path).map(|f| f.kind) {
        Ok(FormatKind::Model(read)) => read(path),
        _ => Err(Error::input(format!(
            "model {} (from {}) has extension {:?}, which the planner cannot read",
            path.display(),
            manifest.display(),
            path.extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase())
                .unwrap_or_default()
        ))
        .help("give a `.tflite` file, or describe the graph inline in the manifest")),
    }
}
