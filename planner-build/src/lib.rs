//! `build.rs` helper for the planner, and the `planner` command behind the `cli` feature.
#![deny(missing_docs)]

#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
