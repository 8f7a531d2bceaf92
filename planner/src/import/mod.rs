//! Import: turn a model file into the [`crate::graph::Graph`] the rest of the pipeline
//! reads.
//!
//! One submodule per input format, each with a `read(path)` entry that returns a validated
//! graph:
//!
//! - [`tflite`]: TensorFlow Lite flatbuffers (`.tflite`), main subgraph.
//! - [`csv`]: MiniMalloc's offset-assignment CSV (`id,lower,upper,size[,offset]`).

pub mod csv;
mod limited;
pub mod tflite;

use std::path::Path;

use crate::error::{Error, Result};
use crate::graph::{DType, Graph, Tensor, TensorKind};
use crate::manifest::{Manifest, ModelSource};
use crate::plan::ArenaRole;

/// The graph a manifest names: its inline graph, or the model file it points at (by
/// extension: `.tflite`). The graph takes the manifest's model name.
pub fn load(manifest: &Manifest) -> Result<Graph> {
    let mut graph = match &manifest.source {
        ModelSource::Inline(g) => (**g).clone(),
        ModelSource::File(path) => read_model_file(path, &manifest.path)?,
    };
    graph.name = manifest.name.clone();
    add_slabs(manifest, &mut graph)?;
    Ok(graph)
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
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "tflite" => tflite::read(path),
        _ => Err(Error::input(format!(
            "model {} (from {}) has extension {ext:?}, which the planner cannot read",
            path.display(),
            manifest.display()
        ))
        .help("give a `.tflite` file, or describe the graph inline in the manifest")),
    }
}
