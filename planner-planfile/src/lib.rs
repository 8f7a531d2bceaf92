//! The plan file of the planner: everything `include_model!` needs, written by
//! `planner-build` into `OUT_DIR` as JSON, versioned.
//!
//! This crate is the format and its reader, and nothing else, so that the proc macro (and
//! anything else that only reads plans, such as a check of a linked firmware) depends on
//! serde, serde_json and the runtime's op options rather than on the whole planner. The
//! planner (`planner::planfile`) re-exports every item here and adds what builds a plan file
//! from a planned graph.
//!
//! A plan file is self-describing: the model's name; its memories with their budgets; each
//! arena with role, memory, source memory, size, budget, alignment and section name; each
//! placed tensor with id, name, dtype, shape, size, quantisation, lifetime and binding
//! (arena, offset, alignment); the operators in order with their inputs, outputs, scratch
//! and typed options; the model's named inputs and outputs; and a plan hash (FNV-1a 64 over
//! the file's canonical bytes, [`fnv1a64`]) that the Rust expansion and the C header both
//! carry, so code built against one plan can tell when it meets another.
//!
//! - [`PlanFile`]: a model's plan file and its entries ([`ArenaEntry`], [`TensorEntry`],
//!   [`OpEntry`], [`InPlaceEntry`], ...); [`PlanFile::parse`] reads one and refuses a
//!   [`FORMAT_VERSION`] it does not know (an older file is to be rebuilt) and values code
//!   generation could not trust.
//! - [`group`]: a group of models planned together ([`GroupPlanFile`]); [`read`] reads a
//!   plan file of either kind ([`AnyPlan`]).
//! - [`patch`]: how a model's first stage runs patch by patch.
//! - [`naming`]: every identifier, section, symbol and file name the build helper and the
//!   macro generate, so the plan file, the linker fragment, the C header and the expansion
//!   agree.
//! - The small value types the format is made of ([`DType`], [`TensorKind`],
//!   [`Quantization`], [`ArenaRole`], [`MemoryConstraint`], [`KernelSet`],
//!   [`PreparedLayout`]) and the platform facts a plan
//!   records ([`Layout`]).
//! - [`PLAN_DIR_VAR`]: the environment variable that tells the macro where the plan files
//!   are.
//!
//! ```
//! use planner_planfile::{AnyPlan, read};
//!
//! // A file from an older planner is refused with what to do about it.
//! let e = read(r#"{"format_version": 1, "model": "kws"}"#, "kws.plan.json").unwrap_err();
//! assert!(e.message().contains("rebuild it"));
//! # let _ = |p: AnyPlan| p;
//! ```
#![deny(missing_docs)]

pub mod control;
mod error;
pub mod group;
mod model;
pub mod naming;
mod options_de;
pub mod patch;
pub mod rows;
mod values;

pub use control::{Control, OpRange};
pub use error::{Error, Result};
pub use group::{AnyPlan, GroupPlanFile, read};
pub use model::{
    ArenaEntry, BlobEntry, FORMAT_VERSION, InPlaceEntry, IoEntry, Layout, LayoutSource, Lifetime,
    MemoryEntry, OpEntry, PLAN_DIR_VAR, PlanFile, PreparedEntry, TensorEntry, fnv1a64, hash_text,
};
pub use options_de::deserialize as deserialize_op_options;
pub use values::{
    ArenaRole, DType, KernelSet, MemoryConstraint, PreparedLayout, Quantization, TensorKind,
    alias_root,
};
