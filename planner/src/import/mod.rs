//! Import: turn a model file into the [`Graph`](crate::graph::Graph) the rest of the pipeline
//! reads.
//!
//! One submodule per input format, each with a `read(path)` entry that returns a validated
//! graph:
//!
//! - [`tflite`]: TensorFlow Lite flatbuffers (`.tflite`), main subgraph.

pub mod tflite;
