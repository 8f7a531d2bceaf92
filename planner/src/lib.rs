//! Compile-time static memory planning for ML models on microcontrollers.
//!
//! A firmware crate names a model and its memory rules in a TOML manifest; the planner
//! decides which memory bank and which offset every tensor gets, and an independent verifier
//! checks the result. The stages, in pipeline order, each a module with one entry function:
//!
//! 1. [`manifest`]: read and check the TOML manifest ([`manifest::load`]).
//! 2. [`graph`]: the model every importer produces (inline graphs come with the manifest).
//! 3. [`lifetimes`]: the ops over which each tensor is live ([`lifetimes::compute`]).
//! 4. [`placement`]: each tensor's role, memory and source memory, with the reason
//!    ([`placement::resolve`]).
//! 5. [`pack`]: offsets within each arena ([`pack::pack`]).
//! 6. [`plan`]: the [`plan::MemoryPlan`] data model, assembled by [`plan_graph`].
//! 7. [`verify`]: the independent checker every plan passes ([`verify::verify`]).
//!
//! [`rt`] is the `no_std` runtime that generated code uses; everything else needs the
//! default `std` feature.
#![no_std]
#![deny(missing_docs)]

#[cfg(feature = "std")]
#[macro_use]
extern crate std;

pub mod rt;

#[cfg(feature = "std")]
mod error;
#[cfg(feature = "std")]
pub mod graph;
#[cfg(feature = "std")]
pub mod import;
#[cfg(feature = "std")]
pub mod lifetimes;
#[cfg(feature = "std")]
pub mod manifest;
#[cfg(feature = "std")]
pub mod pack;
#[cfg(feature = "std")]
mod pipeline;
#[cfg(feature = "std")]
pub mod placement;
#[cfg(feature = "std")]
pub mod plan;
#[cfg(feature = "std")]
pub mod verify;

#[cfg(feature = "std")]
pub use error::{Error, Result};
#[cfg(feature = "std")]
pub use pipeline::{ArenaReport, Planned, plan_graph, plan_with};
