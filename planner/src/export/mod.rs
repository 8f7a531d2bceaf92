//! Plans in the formats other tools read.
//!
//! - [`tflm`]: a `.tflite` model carrying the plan as TensorFlow Lite Micro's
//!   `OfflineMemoryAllocation` metadata, so a TFLM application uses our offsets unchanged.
//! - [`svg`]: a memory map of the plan as an SVG picture, one panel per arena.

pub mod svg;
pub mod tflm;
