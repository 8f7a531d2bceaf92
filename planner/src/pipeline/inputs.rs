//! Stage 1: what every later stage reads and none changes: the manifest, the graph, the
//! lifetimes (with scratch slabs between runs), the resolver's requests and the slot sizes
//! of alias groups. Also the value the placing stages return: where slot roots went.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::string::String;
use std::vec::Vec;

use crate::error::{Error, Result};
use crate::graph::{Graph, TensorIndex};
use crate::lifetimes::Lifetimes;
use crate::manifest::Manifest;
use crate::placement::{self, Decision, Request};
use crate::plan::ArenaRole;

/// The stages' shared, read-only inputs.
pub(super) struct Inputs<'a> {
    pub(super) manifest: &'a Manifest,
    pub(super) graph: &'a Graph,
    /// Lifetimes, with scratch slabs moved one step past the last op.
    pub(super) lifetimes: Cow<'a, Lifetimes>,
    /// Fixed scratch offsets (a CSV problem's `offset` column).
    pub(super) fixed: &'a BTreeMap<TensorIndex, u64>,
    /// The resolver's request per tensor; `None` for unused tensors.
    pub(super) requests: Vec<Option<Request>>,
    /// Bytes of each slot root (an alias group takes its largest member's size).
    pub(super) slot_size: Vec<u64>,
    /// Used tensors that are not aliases, in graph order.
    pub(super) roots: Vec<usize>,
}

/// Slot roots one stage placed: (root, where it went, offset in its arena), in the order
/// the stage placed them.
pub(super) type Placed = Vec<(usize, Decision, u64)>;

impl<'a> Inputs<'a> {
    /// Checks the inputs and runs the resolver; also returns the resolver's warnings.
    pub(super) fn new(
        manifest: &'a Manifest,
        graph: &'a Graph,
        lifetimes: &'a Lifetimes,
        fixed: &'a BTreeMap<TensorIndex, u64>,
    ) -> Result<(Inputs<'a>, Vec<String>)> {
        graph.validate()?;
        if lifetimes.live.len() != graph.tensors.len() {
            return Err(Error::input(format!(
                "lifetimes cover {} tensors but the graph has {}",
                lifetimes.live.len(),
                graph.tensors.len()
            )));
        }
        let lifetimes = with_slabs(manifest, graph, lifetimes);
        let placement = placement::resolve(manifest, graph, &lifetimes)?;
        let requests = placement.requests;
        let n = graph.tensors.len();
        let roots: Vec<usize> = (0..n)
            .filter(|&i| requests[i].is_some() && !lifetimes.is_alias(TensorIndex(i as u32)))
            .collect();
        // Alias groups take the largest member's size.
        let mut slot_size: Vec<u64> = graph.tensors.iter().map(|t| t.size).collect();
        for (i, r) in requests.iter().enumerate() {
            let root = lifetimes.slot_of[i].get();
            if root != i && r.is_some() {
                slot_size[root] = slot_size[root].max(graph.tensors[i].size);
            }
        }
        let inputs = Inputs {
            manifest,
            graph,
            lifetimes,
            fixed,
            requests,
            slot_size,
            roots,
        };
        Ok((inputs, placement.warnings))
    }

    /// Slot alignment of tensor `t` in `memory`: max(the memory's alignment, the dtype's
    /// size, the tensor's hint).
    pub(super) fn slot_align(&self, t: usize, memory: &str) -> u64 {
        let tensor = &self.graph.tensors[t];
        self.manifest
            .memory_alignment(memory)
            .max(tensor.dtype.align())
            .max(tensor.align_hint.unwrap_or(1))
    }

    /// Arena base alignment: max(16, min_alignment, arena_alignment, largest slot
    /// alignment).
    pub(super) fn arena_base_align(&self, memory: &str, largest_slot: u64) -> u64 {
        16u64
            .max(self.manifest.memory_alignment(memory))
            .max(largest_slot)
    }

    /// The scratch banks' names, in preference order (`memory.constraints`, or every
    /// writable memory).
    pub(super) fn bank_names(&self) -> Vec<String> {
        self.manifest
            .scratch_banks()
            .iter()
            .map(|m| m.name.clone())
            .collect()
    }

    /// The last op of the schedule (slabs included).
    pub(super) fn last_op(&self) -> u32 {
        self.lifetimes.ops.saturating_sub(1)
    }

    /// Slot roots whose request has `role`.
    pub(super) fn roots_of(&self, role: ArenaRole) -> impl Iterator<Item = (usize, &Request)> {
        self.roots.iter().filter_map(move |&i| {
            self.requests[i]
                .as_ref()
                .filter(|r| r.role == role)
                .map(|r| (i, r))
        })
    }

    /// Points `e` at the manifest line that sets `bank`'s budget (a constraint's
    /// `max_size`, a memory's `size`, or the preset), when the manifest has one.
    pub(super) fn at_budget(&self, e: Error, bank: &str) -> Error {
        match self.manifest.budget_source(bank) {
            Some((span, what)) => e.at(span).label(format!("{what} set here")),
            None => e,
        }
    }
}

/// Where every slot root went: the placing stages' results put together, by tensor index.
pub(super) struct Places {
    /// Final decisions of slot roots.
    pub(super) decided: Vec<Option<Decision>>,
    /// Offsets of slot roots in their arenas.
    pub(super) offsets: Vec<Option<u64>>,
}

impl Places {
    /// The places of `n` tensors from what each stage placed (a later stage's entry for a
    /// root wins; no two stages place one root).
    pub(super) fn of(n: usize, stages: [Placed; 3]) -> Places {
        let mut places = Places {
            decided: vec![None; n],
            offsets: vec![None; n],
        };
        for (i, d, o) in stages.into_iter().flatten() {
            places.decided[i] = Some(d);
            places.offsets[i] = Some(o);
        }
        places
    }
}

/// Bytes charged to each memory, and what its budget has left (`None`: unlimited).
#[derive(Default)]
pub(super) struct Budget {
    /// Bytes charged to each memory by constant and persistent arenas.
    pub(super) charged: BTreeMap<String, u64>,
    /// What each memory's budget has left (`None`: unlimited).
    pub(super) left: BTreeMap<String, Option<u64>>,
}

impl Budget {
    /// Charges `bytes` of `memory` to constants or state.
    pub(super) fn charge(&mut self, memory: &str, bytes: u64) {
        let e = self.charged.entry(memory.into()).or_insert(0);
        *e = e.saturating_add(bytes);
    }

    /// Takes `used` bytes of `memory`'s remaining budget and returns the arena's
    /// `total_size`: what was left for it (its `used` when the memory is unlimited).
    pub(super) fn share(&mut self, memory: &str, used: u64) -> u64 {
        match self.left.get_mut(memory) {
            Some(Some(l)) => {
                let total = (*l).max(used);
                *l = l.saturating_sub(used);
                total
            }
            _ => used,
        }
    }
}

/// Scratch slabs live "between runs": one step past the last op, so they share bytes with
/// every scratch tensor of the model and with nothing that is live during a run.
fn with_slabs<'a>(
    manifest: &Manifest,
    graph: &Graph,
    lifetimes: &'a Lifetimes,
) -> Cow<'a, Lifetimes> {
    let mut scratch_slabs = manifest
        .slabs
        .iter()
        .filter(|s| s.role == ArenaRole::Scratch)
        .peekable();
    if scratch_slabs.peek().is_none() {
        return Cow::Borrowed(lifetimes);
    }
    let mut l = lifetimes.clone();
    let between = lifetimes.ops;
    for s in scratch_slabs {
        if let Some(t) = graph.find(&s.tensor_id()) {
            l.live[t.get()] = Some((between, between));
        }
    }
    l.ops = between + 1;
    Cow::Owned(l)
}
