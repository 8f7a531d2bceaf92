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
    let mut decisions: Vec<Option<Decision>> = vec![None; st.graph.tensors.len()];
    let last = st.last_op();
    for (i, t) in st.graph.tensors.iter().enumerate() {
        if st.requests[i].is_none() {
            continue;
        }
        let slot = st.lifetimes.slot_of[i].get();
        let (Some(d), Some(offset)) = (st.decided[slot].as_ref(), st.offsets[slot]) else {
            return Err(internal(&format!("tensor {} was not placed", t.id)));
        };
        decisions[i] = Some(if slot == i {
            d.clone()
        } else {
            Decision {
                reason: Reason::Alias {
                    of: st.graph.tensors[slot].id.clone(),
                },
                ..d.clone()
            }
        });
        let (start, end) = st.lifetimes.live[i].unwrap_or((0, last));
        let binding = TensorBinding {
            role: d.role,
            memory: d.memory.clone(),
            source_memory: d.source_memory.clone(),
            offset,
        };
        plan.tensor_allocs.insert(
            t.id.clone(),
            TensorAllocation {
                tensor_id: t.id.clone(),
                memory: d.memory.clone(),
                offset,
                size: t.size,
                binding: Some(binding),
            },
        );
        plan.tensor_lifetimes.insert(
            t.id.clone(),
            TensorLifetime {
                tensor_id: t.id.clone(),
                start_op: start,
                end_op: end,
            },
        );
    }
    Ok((plan, decisions))
}
