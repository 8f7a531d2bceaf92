//! `include_model!`: turns the memory plan `planner-build` wrote into `static` arenas,
//! typed tensor views and `const` items that make rustc check the plan.
//!
//! The firmware crate's `build.rs` runs the planner:
//!
//! ```ignore
//! fn main() {
//!     planner_build::compile("model.toml");
//! }
//! ```
//!
//! and its source includes the model by name (or by the plan file's path, relative to the
//! source file, as `include_bytes!` resolves paths):
//!
//! ```ignore
//! planner_macros::include_model!("hello_world");
//!
//! let model = hello_world::Model::take().unwrap(); // the only handle to the arenas
//! let mut model = model.init(); // zero persistent arenas, copy staged weights
//! model.input_x_mut().fill(0);
//! let op = model.op0(); // op 0's inputs (shared) and outputs (mutable)
//! model.run(&mut kernels)?; // or every op through a kernel set
//! ```
//!
//! The expansion is a module named after the model. See the `planner` crate's `rt` module
//! for the types it uses, and [`include_model!`] for the items it makes.
//!
//! The crate is split by job: [`parse`](crate) reads the macro's arguments, `load` finds,
//! reads and checks the plan file, and `codegen` makes one group of items per file, with
//! every name from `planner_planfile::naming`.
#![deny(missing_docs)]

mod analyze;
mod codegen;
mod load;
mod parse;
#[cfg(test)]
mod props;

use proc_macro::TokenStream;

/// Expands to a module named after the model with the plan's statics, handle, views and
/// checks.
///
/// Arguments: the model's name (`"kws"`, looked up in the directory `planner-build` names
/// in `PLANNER_PLAN_DIR`) or the path of a plan file (`"plans/kws.plan.json"`, relative to
/// the invoking source file); optionally `crate = path` when `planner` is not a direct
/// dependency under that name.
///
/// The module holds:
///
/// - `MODEL`, `PLAN_HASH` (the hash the C header carries too), `PLAN_FILE` (the plan's
///   bytes through `include_bytes!`, so editing the plan recompiles);
/// - one `static` per arena in the section the plan names (`.bss.planner.<model>.<role>.
///   <memory>` for zero-filled arenas, `.rodata.planner.<model>.constant.<memory>` for
///   weight blobs, read with `include_bytes!`), aligned as the plan says; no `static mut`;
/// - `Handle<'a, S>`: the handle, borrowing its arenas for `'a`; `Model<S>` is
///   `Handle<'static, S>`. `Model::take()` gives the one handle to the statics (`None` the
///   second time); `Handle::from_buffers(Buffers { .. })` and `bind_<arena>(..)` use buffers
///   the application allocates, of any lifetime (one buffer can serve several models in
///   turn), checking their size and alignment and naming the arena in the error. Both give
///   a `Handle<'a, Uninit>`, which has no tensor access; `init()` zeroes persistent arenas,
///   copies staged constants into their runtime arena, and returns `Handle<'a, Ready>` (the
///   default, so `Model` alone means a ready handle to the statics). A model whose manifest
///   marks a memory `app_bound` has no static for its arenas there, and so no `take()`;
/// - on `Model<Ready>`: `tensor_<name>()` / `tensor_<name>_mut()` per tensor (`_mut` only
///   for writable arenas), `input_<signature name>[_mut]()`, `output_<name>[_mut]()`, and
///   `op<k>()` returning `ops::Op<k>`, a struct with shared slices of op *k*'s inputs and
///   mutable slices of its outputs and scratch, all borrowed from `&mut Model`;
/// - `tensors::<NAME>`, `inputs::<NAME>`, `outputs::<NAME>`: `planner::rt::TensorInfo`
///   constants with shape, element count, dtype and quantisation;
/// - `ops::Op<k>::OPTIONS`, the op's typed options (`planner::rt::options::Conv2dOptions`,
///   ...; none for an op without typed options), and `OPTIONS`, every op's
///   `planner::rt::options::OpOptions` in order;
/// - on `Model<Ready>`: `run(&mut kernels)` and `run_with(&mut kernels, &mut hooks)`, which
///   run every op in plan order through the `planner::rt::kernel` trait of its kind, with the
///   op's tensors, options and quantisation. The bounds name exactly the kinds the model
///   uses, so a kernel set that lacks one is a compile error naming the op;
/// - a `const` item evaluating `planner::rt::check::check` on the plan, which fails the
///   build when slots overlap while live, pass their arena, are misaligned, an arena passes
///   its budget or a blob's length differs from its arena's. It runs in time linear in the
///   plan (over orders the expansion emits and the check verifies), so long models compile.
///
/// Given a group's name (a group manifest planned by `planner-build`), it expands to a
/// module named after the group with one `static` per group arena, one module per model
/// (the items above, over the group's statics, without `take()`), `GROUP_PLAN` with a
/// `const` item evaluating `planner::rt::check::check_group` (distinct model names, each
/// model's arenas are the group's in name, size, alignment and writability, each concurrent
/// set names distinct models, every two models of a set share no writable byte, no two
/// models share state), and the group handle `Handle<'a, S>` (`Group<S>` = `Handle<'static, S>`):
/// the same `take()` (as `Group::take()`), `Handle::from_buffers` and `bind_<arena>` as a
/// model's, `init()` (every model's state zeroed once, its int8 variables set to their zero
/// point as for the model alone), then
/// `group.<model>()`, which lends that model's handle borrowing the group `mut` (so two
/// models' handles cannot be held at once), and one method per `concurrent` set
/// (`group.kws_and_vww()`) returning all its handles together.
#[proc_macro]
pub fn include_model(input: TokenStream) -> TokenStream {
    codegen::expand(input.into()).into()
}
