//! Stage 6: the plan. Every used tensor is bound where its slot went; aliases take their
//! slot's binding and say so.

use std::collections::BTreeMap;
use std::string::String;
use std::vec::Vec;

use super::internal;
use super::inputs::{Inputs, Places};
use crate::error::Result;
use crate::par::{PARALLEL_FROM, both};
use crate::placement::{Decision, Reason};
use crate::plan::{MemoryPlan, TensorAllocation, TensorBinding, TensorLifetime};

/// Binds every used tensor where `places` put its slot, into `plan` (the arenas); returns
/// the plan and each tensor's final decision.
pub(super) fn bind(
    inp: &Inputs<'_>,
    places: &Places,
    mut plan: MemoryPlan,
) -> Result<(MemoryPlan, Vec<Option<Decision>>)> {
    let tensors = &inp.graph.tensors;
    let last = inp.last_op();
    // Bound tensors by id: the plan's maps are built from sorted entries in one go, not by
    // a search per insertion (which, on 10^6 tensors, was most of this stage).
    let mut bound: Vec<usize> = (0..tensors.len())
        .filter(|&i| inp.requests[i].is_some())
        .collect();
    bound.sort_unstable_by(|&a, &b| tensors[a].id.cmp(&tensors[b].id));
    // On large graphs the two maps are built on two threads.
    let (allocs, lifetimes) = both(
        bound.len() >= PARALLEL_FROM,
        || allocations(inp, places, &bound),
        || {
            let entries = bound.iter().map(|&i| {
                let t = &tensors[i];
                let own = inp.lifetimes.own.get(&crate::graph::TensorIndex(i as u32));
                let (start, end) = own.copied().or(inp.lifetimes.live[i]).unwrap_or((0, last));
                let lifetime = TensorLifetime {
                    tensor_id: t.id.clone(),
                    start_op: start,
                    end_op: end,
                };
                (t.id.clone(), lifetime)
            });
            // Already in key order, so collecting only checks the order and builds the tree.
            entries.collect::<BTreeMap<String, TensorLifetime>>()
        },
    );
    let (allocs, decisions) = allocs?;
    plan.tensor_allocs = allocs;
    plan.tensor_lifetimes = lifetimes;
    Ok((plan, decisions))
}

/// The plan's allocations by tensor id.
type Allocations = BTreeMap<String, TensorAllocation>;

/// The allocation of each tensor of `bound` (bound tensors by id), as the plan's map, and
/// each tensor's final decision (by index; aliases take their slot's and say so).
fn allocations(
    inp: &Inputs<'_>,
    places: &Places,
    bound: &[usize],
) -> Result<(Allocations, Vec<Option<Decision>>)> {
    let tensors = &inp.graph.tensors;
    let mut decisions: Vec<Option<Decision>> = vec![None; tensors.len()];
    let mut allocs = Vec::with_capacity(bound.len());
    for &i in bound {
        let t = &tensors[i];
        let slot = inp.lifetimes.slot_of[i].get();
        let (Some(d), Some(offset)) = (places.decided[slot].as_ref(), places.offsets[slot]) else {
            return Err(internal(&format!("tensor {} was not placed", t.id)));
        };
        let binding = TensorBinding {
            role: d.role,
            memory: d.memory.clone(),
            source_memory: d.source_memory.clone(),
            offset,
        };
        allocs.push((
            t.id.clone(),
            TensorAllocation {
                tensor_id: t.id.clone(),
                memory: d.memory.clone(),
                offset,
                size: t.size,
                binding: Some(binding),
            },
        ));
        // An in-place pair shares the slot at one op only: not an alias.
        let in_place = inp
            .lifetimes
            .own
            .contains_key(&crate::graph::TensorIndex(i as u32));
        decisions[i] = Some(if slot == i || in_place {
            d.clone()
        } else {
            Decision {
                reason: Reason::Alias {
                    of: tensors[slot].id.clone(),
                },
                ..d.clone()
            }
        });
    }
    // Already in key order, so collecting only checks the order and builds the tree.
    Ok((allocs.into_iter().collect(), decisions))
}
