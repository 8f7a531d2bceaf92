//! Stage 6: the plan. Every used tensor is bound where its slot went; aliases take their
//! slot's binding and say so.

use std::vec::Vec;

use super::internal;
use super::state::State;
use crate::error::Result;
use crate::placement::{Decision, Reason};
use crate::plan::{MemoryPlan, TensorAllocation, TensorBinding, TensorLifetime};

/// Binds every used tensor; returns the plan and each tensor's final decision.
pub(super) fn bind(st: &State<'_>) -> Result<(MemoryPlan, Vec<Option<Decision>>)> {
    let mut plan = st.plan.clone();
    let tensors = &st.graph.tensors;
    let mut decisions: Vec<Option<Decision>> = vec![None; tensors.len()];
    let last = st.last_op();
    // Bound tensors by id: the plan's maps are built from sorted entries in one go, not by
    // a search per insertion (which, on 10^6 tensors, was most of this stage).
    let mut bound: Vec<usize> = (0..tensors.len())
        .filter(|&i| st.requests[i].is_some())
        .collect();
    bound.sort_unstable_by(|&a, &b| tensors[a].id.cmp(&tensors[b].id));
    let mut allocs = Vec::with_capacity(bound.len());
    let mut lifetimes = Vec::with_capacity(bound.len());
    for &i in &bound {
        let t = &tensors[i];
        let slot = st.lifetimes.slot_of[i].get();
        let (Some(d), Some(offset)) = (st.decided[slot].as_ref(), st.offsets[slot]) else {
            return Err(internal(&format!("tensor {} was not placed", t.id)));
        };
        let (start, end) = st.lifetimes.live[i].unwrap_or((0, last));
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
        lifetimes.push((
            t.id.clone(),
            TensorLifetime {
                tensor_id: t.id.clone(),
                start_op: start,
                end_op: end,
            },
        ));
        decisions[i] = Some(if slot == i {
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
    // Already in key order, so collecting only checks the order and builds the trees.
    plan.tensor_allocs = allocs.into_iter().collect();
    plan.tensor_lifetimes = lifetimes.into_iter().collect();
    Ok((plan, decisions))
}
