//! Compile-time static memory planning for ML models on microcontrollers.
//!
//! A firmware crate names a model and its memory rules in a TOML manifest; the planner
//! decides which memory bank and which offset every tensor gets, and an independent verifier
//! checks the result. The stages, in pipeline order, each a module with one entry function:
//!
//! 1. [`manifest`]: read and check the TOML manifest ([`manifest::load`]).
//! 2. [`import`]: the [`graph::Graph`] from an inline graph, a `.tflite` file or a CSV
//!    problem ([`import::load`]).
//! 3. [`in_place`], [`schedule`] and [`alias`]: optionally PADs folded into convolutions
//!    ([`in_place::fold_pads`]), a memory-aware op order ([`schedule::reorder`]), in-place
//!    aliases ([`alias::detect`]) and ops run in place ([`in_place::detect`]).
//! 4. [`lifetimes`]: the ops over which each tensor is live ([`lifetimes::compute`]).
//! 5. [`placement`]: each tensor's role, memory and source memory, with the reason
//!    ([`placement::resolve`]).
//! 6. [`pack`]: offsets within each arena ([`pack::pack`]).
//! 7. [`plan`](mod@plan): the [`plan::MemoryPlan`] data model, assembled by the pipeline's
//!    stages (constant arenas, persistent arenas, budgets, scratch fill with spill, binding).
//! 8. [`verify`]: the independent checker every plan passes ([`verify::verify`]).
//!
//! The facade: [`plan()`] plans the model a manifest names; [`plan_graph`] plans a graph
//! already imported; [`solve_problem`] plans a MiniMalloc CSV problem on its own items (64-bit
//! heights, no arena cap), [`plan_problem`] as a one-bank model plan.
//!
//! [`rt`] is the `no_std` runtime that generated code uses (the `planner-rt` crate,
//! re-exported); everything else needs the default `std` feature.
#![no_std]
#![deny(missing_docs)]

#[cfg(any(feature = "std", test))]
#[macro_use]
extern crate std;

/// The `no_std` runtime that generated code uses and kernels implement: the `planner-rt`
/// crate, re-exported whole, so that `planner::rt::...` names each of its items (and rustc's
/// messages name them by that path, which a firmware crate can write).
pub mod rt {
    #[doc(inline)]
    pub use planner_rt::*;
}

#[cfg(feature = "std")]
pub mod alias;
#[cfg(feature = "std")]
mod error;
#[cfg(feature = "std")]
pub mod export;
#[cfg(feature = "std")]
pub mod graph;
#[cfg(feature = "std")]
pub mod import;
#[cfg(feature = "std")]
pub mod in_place;
#[cfg(feature = "std")]
pub mod lifetimes;
#[cfg(feature = "std")]
pub mod manifest;
#[cfg(feature = "std")]
mod options_de;
#[cfg(feature = "std")]
pub mod pack;
#[cfg(feature = "std")]
mod par;
#[cfg(feature = "std")]
pub mod patch;
#[cfg(feature = "std")]
mod pipeline;
#[cfg(feature = "std")]
pub mod placement;
#[cfg(feature = "std")]
pub mod plan;
#[cfg(feature = "std")]
pub mod planfile;
#[cfg(feature = "std")]
pub mod report;
#[cfg(feature = "std")]
pub mod schedule;
#[cfg(feature = "std")]
pub mod verify;

#[cfg(feature = "std")]
pub use error::{Error, Result};
#[cfg(feature = "std")]
pub use pipeline::{
    ArenaReport, ArenaUser, GroupArena, GroupPlanned, MAX_PROBLEM_HEIGHT, Planned, ProblemInput,
    ProblemOutcome, Solution, SolvedProblem, plan, plan_graph, plan_group, plan_problem,
    problem_input, solve_problem, users_of,
};
