//! The memory plan: where every tensor lives, at what offset, in which arena.
//!
//! These are the seed data model's types, serialisable with the seed's field names (JSON keys
//! in snake_case). Maps are ordered so the same plan always serialises to the same bytes.

use std::collections::BTreeMap;
use std::string::String;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
#[doc(inline)]
pub use planner_planfile::{ArenaRole, MemoryConstraint};

/// Where one tensor is bound: its role, runtime memory, source memory and offset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorBinding {
    /// The arena role.
    pub role: ArenaRole,
    /// The memory the tensor is read and written in at run time.
    pub memory: String,
    /// Where the bytes come from: differs from `memory` only for staged constants.
    pub source_memory: String,
    /// Offset inside the arena of (`role`, `memory`).
    pub offset: u64,
}

impl TensorBinding {
    /// True for a constant copied from `source_memory` into `memory` at init.
    pub fn is_staged(&self) -> bool {
        self.role == ArenaRole::Constant && self.source_memory != self.memory
    }
}

/// The ops over which a tensor is live, inclusive at both ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorLifetime {
    /// The tensor's id.
    pub tensor_id: String,
    /// First op that needs the tensor's bytes.
    pub start_op: u32,
    /// Last op that needs them.
    pub end_op: u32,
}

impl TensorLifetime {
    /// A lifetime covering the single op `op`.
    pub fn at(tensor_id: impl Into<String>, op: u32) -> TensorLifetime {
        TensorLifetime {
            tensor_id: tensor_id.into(),
            start_op: op,
            end_op: op,
        }
    }

    /// Extends the lifetime to cover `op`.
    pub fn add_op(&mut self, op: u32) {
        self.start_op = self.start_op.min(op);
        self.end_op = self.end_op.max(op);
    }

    /// Extends the lifetime to cover `other` too (an alias shares one slot).
    pub fn merge(&mut self, other: &TensorLifetime) {
        self.start_op = self.start_op.min(other.start_op);
        self.end_op = self.end_op.max(other.end_op);
    }

    /// True when the two lifetimes share an op, so the tensors may not share bytes.
    pub fn overlaps(&self, other: &TensorLifetime) -> bool {
        self.start_op <= other.end_op && other.start_op <= self.end_op
    }
}

/// One tensor's slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorAllocation {
    /// The tensor's id.
    pub tensor_id: String,
    /// Runtime memory (same as `binding.memory`).
    pub memory: String,
    /// Offset in its arena (same as `binding.offset`).
    pub offset: u64,
    /// Bytes.
    pub size: u64,
    /// The binding; always set by our planners.
    pub binding: Option<TensorBinding>,
}

/// One arena: a contiguous region of one memory holding tensors of one role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArenaUsage {
    /// Runtime memory.
    pub memory: String,
    /// Bytes available to this arena (its share of the memory's budget).
    pub total_size: u64,
    /// Bytes the arena occupies: the end of its highest slot. The generated `static` has
    /// this length.
    pub used: u64,
    /// What it holds.
    pub role: ArenaRole,
    /// Where its bytes come from (differs from `memory` only for staged constant arenas).
    pub source_memory: String,
    /// Alignment of the arena's base address.
    pub alignment: u64,
}

impl ArenaUsage {
    /// An empty arena with room for `total_size` bytes.
    pub fn new(
        memory: impl Into<String>,
        role: ArenaRole,
        source_memory: impl Into<String>,
        total_size: u64,
        alignment: u64,
    ) -> ArenaUsage {
        ArenaUsage {
            memory: memory.into(),
            total_size,
            used: 0,
            role,
            source_memory: source_memory.into(),
            alignment,
        }
    }

    /// True for a constant arena copied from `source_memory` into `memory` at init.
    pub fn is_staged(&self) -> bool {
        self.role == ArenaRole::Constant && self.source_memory != self.memory
    }

    /// Bump-allocates `size` bytes at the next offset aligned to `align`; an error (not a
    /// panic) when that passes `total_size`.
    pub fn allocate(&mut self, size: u64, align: u64) -> Result<u64> {
        let offset = align_up(self.used, align).ok_or_else(|| self.full(size))?;
        let end = offset.checked_add(size).ok_or_else(|| self.full(size))?;
        if end > self.total_size {
            return Err(self.full(size));
        }
        self.used = end;
        Ok(offset)
    }

    fn full(&self, size: u64) -> Error {
        Error::infeasible(format!(
            "{} arena in {} is full: {size} more bytes wanted, {} of {} used",
            self.role.name(),
            self.memory,
            self.used,
            self.total_size
        ))
    }
}

/// The most bytes one arena (and so one tensor) may take: `isize::MAX` of a 32-bit target,
/// the largest object Rust allows there. What links is less and depends on the target: all
/// statics together must fit the reach of its code model (2 GiB of code and statics on
/// x86_64), which `planner_build::target` checks for the whole plan. Every size the
/// pipeline adds stays far from `u64` overflow because no slot passes this.
pub const MAX_ARENA: u64 = (1 << 31) - 1;

/// Rounds `value` up to a multiple of `align` (a power of two); `None` on overflow.
pub fn align_up(value: u64, align: u64) -> Option<u64> {
    let mask = align.max(1) - 1;
    value.checked_add(mask).map(|v| v & !mask)
}

/// The whole plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryPlan {
    /// Every placed tensor's slot, by tensor id.
    pub tensor_allocs: BTreeMap<String, TensorAllocation>,
    /// Scratch arenas, by memory.
    pub arena_usages: BTreeMap<String, ArenaUsage>,
    /// Persistent arenas, by memory.
    pub persistent_arenas: BTreeMap<String, ArenaUsage>,
    /// Constant arenas, by runtime memory. Each has exactly one source memory.
    pub constant_arenas: BTreeMap<String, ArenaUsage>,
    /// Lifetimes of the placed tensors, by tensor id.
    pub tensor_lifetimes: BTreeMap<String, TensorLifetime>,
}

impl MemoryPlan {
    /// The slot of tensor `id`; an error naming it when the plan has none.
    pub fn get_allocation(&self, id: &str) -> Result<&TensorAllocation> {
        self.tensor_allocs.get(id).ok_or_else(|| {
            Error::input(format!(
                "the plan has no tensor `{id}` ({} tensors are placed); check the id against `planner explain`",
                self.tensor_allocs.len()
            ))
        })
    }

    /// Where tensor `id` is bound (arena role, memory, offset), when the plan places it.
    pub fn binding(&self, id: &str) -> Option<&TensorBinding> {
        self.tensor_allocs.get(id).and_then(|a| a.binding.as_ref())
    }

    /// The arena of `role` in `memory`.
    pub fn arena(&self, role: ArenaRole, memory: &str) -> Option<&ArenaUsage> {
        match role {
            ArenaRole::Scratch => self.arena_usages.get(memory),
            ArenaRole::Persistent => self.persistent_arenas.get(memory),
            ArenaRole::Constant => self.constant_arenas.get(memory),
        }
    }

    /// Every arena: scratch, then persistent, then constant, each by memory name.
    pub fn arenas(&self) -> impl Iterator<Item = &ArenaUsage> {
        self.arena_usages
            .values()
            .chain(self.persistent_arenas.values())
            .chain(self.constant_arenas.values())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetime_ops() {
        let mut a = TensorLifetime::at("a", 3);
        a.add_op(5);
        a.add_op(1);
        assert_eq!((a.start_op, a.end_op), (1, 5));
        let b = TensorLifetime::at("b", 6);
        assert!(!a.overlaps(&b));
        a.merge(&b);
        assert_eq!((a.start_op, a.end_op), (1, 6));
        assert!(a.overlaps(&b));
    }

    #[test]
    fn bump_allocation_errors_instead_of_panicking() {
        let mut arena = ArenaUsage::new("DTCM", ArenaRole::Persistent, "DTCM", 40, 16);
        assert_eq!(arena.allocate(10, 16).unwrap(), 0);
        assert_eq!(arena.allocate(10, 16).unwrap(), 16);
        assert_eq!(arena.used, 26);
        let err = arena.allocate(10, 16).unwrap_err();
        assert!(err.is_infeasible());
        assert!(err.message().contains("persistent arena in DTCM is full"));
        assert!(arena.allocate(u64::MAX, 1).is_err());
        assert_eq!(arena.used, 26);
    }

    #[test]
    fn missing_allocation_is_an_error() {
        let plan = MemoryPlan::default();
        let e = plan.get_allocation("conv/out").unwrap_err();
        assert!(e.message().contains("conv/out"));
    }

    #[test]
    fn staged_means_different_source() {
        let a = ArenaUsage::new("DTCM", ArenaRole::Constant, "FLASH", 0, 16);
        assert!(a.is_staged());
        let b = ArenaUsage::new("FLASH", ArenaRole::Constant, "FLASH", 0, 16);
        assert!(!b.is_staged());
    }
}
