//! Compile-time static memory planning for ML models on microcontrollers.
//!
//! A firmware crate names a model and its memory rules in a TOML manifest; the planner
//! decides which memory bank and which offset every tensor gets, and an independent verifier
//! checks the result. The stages, in pipeline order, each a module with one entry function:
//!
//! 1. [`manifest`]: read and check the TOML manifest ([`manifest::load`]).
//! 2. [`import`]: the [`graph::Graph`] from an inline graph, a `.tflite` file or a CSV
//!    problem ([`import::load`]).
//! 3. The graph rewrites, internal to the crate: the constants and kernel scratch a kernel
//!    set asks for (`prepare`), PADs folded into convolutions and ops run in place
//!    (`in_place`), a memory-aware op order (`schedule`), reshape aliases (`alias`) and the
//!    patch-based first stage (`patch`).
//! 4. The ops over which each tensor is live (`lifetimes`), each tensor's role, memory and
//!    source memory with the reason (`placement`).
//! 5. [`pack`]: offsets within each arena ([`pack::pack`]), on an abstract
//!    [`pack::Problem`] that MiniMalloc CSV instances share.
//! 6. [`plan`](mod@plan): the [`plan::MemoryPlan`] data model, assembled by the pipeline's
//!    stages (constant arenas, persistent arenas, budgets, scratch fill with spill, binding).
//! 7. [`verify`]: the independent checker every plan passes ([`verify::verify`]).
//!
//! What comes out: [`report`] (tables, JSON, explanations), [`export`] (SVG, TFLM offline
//! plan), [`planfile`] (the file `include_model!` reads).
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

/// Everything but the runtime: each item needs the `std` feature (one `cfg` for all of them).
macro_rules! host {
    ($($item:item)*) => {
        $(#[cfg(feature = "std")] $item)*
    };
}

host! {
    mod alias;
    mod error;
    pub mod export;
    pub mod graph;
    pub mod import;
    mod in_place;
    #[doc(hidden)]
    pub mod lifetimes;
    mod limited;
    pub mod manifest;
    /// Every name the generated code, the plan file and the linker script use (documented
    /// as [`planfile::naming`]).
    #[doc(hidden)]
    pub use planner_planfile::naming;
    pub mod pack;
    mod par;
    #[doc(hidden)]
    pub mod patch;
    /// The patch plan's types (documented as [`planfile::patch`]).
    #[doc(hidden)]
    pub use planner_planfile::patch as patch_plan;
    mod pipeline;
    mod placement;
    mod planned;
    pub mod plan;
    mod prepare;
    pub mod planfile;
    pub mod report;
    #[doc(hidden)]
    pub mod schedule;
    pub mod verify;
    pub use error::{Error, Result};
    pub use pipeline::{
        ArenaReport, ArenaUser, DEFAULT_SEARCH_TIME, GroupArena, GroupPlanned, MAX_PROBLEM_HEIGHT,
        Planned, ProblemInput, ProblemOutcome, Solution, SolvedProblem, Unit, plan, plan_graph,
        plan_group, plan_problem, plan_unit, solve_problem, solve_problem_within,
    };
    /// Steps of the facade the CLI and the benches call on their own.
    #[doc(hidden)]
    pub use pipeline::{problem_input, solve_problem_chain, users_of};
}
