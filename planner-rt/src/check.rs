//! The `const fn` plan checker: rustc evaluates it on the table `include_model!` builds from
//! the plan file, so a plan that breaks the layout rules fails to compile.
//!
//! The generated tensor views are sound because of what [`check`] proves: every slot lies
//! inside its arena and is aligned for its element type; two tensors whose lifetimes share an
//! op never share a byte of a writable arena (unless the plan says one is an alias of the
//! other, in which case no view ever holds both at once); every tensor an op touches is live
//! at that op; no op writes a read-only arena; arenas keep their budgets; blobs are exactly as
//! long as their arenas. Each failure panics with a message that names the model, the
//! tensors and the bytes, which rustc prints as the compile error.
//!
//! Every test runs in time linear in the table (rustc's `const` evaluator is slow, and a
//! check quadratic in the tensors made models of a few thousand ops fail to compile): the
//! generated code hands the checker tables sorted by (arena, offset), by first live op and by
//! last live op, which the checker verifies rather than trusts, and the overlap test is a
//! sweep over time whose live set is a bitset over the offset order (see `check_overlaps`),
//! in `scratch` memory the `const` item provides.

mod group;
mod in_place;
mod msg;
mod patch;
mod rows;
mod scratch;
mod sweep;
mod table;
#[cfg(test)]
mod tests;

pub use group::{GroupArenaRow, GroupModelRow, GroupTable, check_group};
use msg::Msg;
pub use patch::{PatchRow, PatchTable, check_patches};
pub use scratch::scratch_len;
pub use table::{
    ArenaRow, InPlaceRow, MemoryRow, NONE, OpRow, PlanTable, SlotRow, in_place_bytes,
    in_place_elements, time_orders,
};

/// Checks the whole table; panics (a compile error in a `const` item) on the first fault.
/// `scratch` is working memory of at least [`scratch_len`]`(plan.slots.len())` words (a
/// `const` item has no allocator); its contents on entry do not matter.
pub const fn check(plan: &PlanTable<'_>, scratch: &mut [u64]) {
    rows::check_memories(plan);
    rows::check_slots(plan);
    sweep::check_overlaps(plan, scratch);
    rows::check_ops(plan);
}
