//! The entries of a model's plan file, built from its graph and plan: memories and arenas
//! (sections and blobs named from the model), tensors, ops with their tensors renumbered.

#[allow(clippy::wildcard_imports)]
use super::*;
use crate::plan::ArenaUsage;

/// Memories and their budgets, each arena's entry, and (role, memory) → arena index.
pub(super) type Arenas = (
    Vec<MemoryEntry>,
    Vec<ArenaEntry>,
    BTreeMap<(ArenaRole, String), usize>,
);

/// The entry of arena `usage` of `owner` (a model, or a group for its shared arenas):
/// sections and blobs named from the owner, `app_bound` from `layout`.
pub(super) fn arena_entry(owner: &str, usage: &ArenaUsage, layout: &Layout) -> ArenaEntry {
    let (section, blob) = match usage.role {
        ArenaRole::Constant => (
            usage
                .is_staged()
                .then(|| naming::zeroed_section(owner, usage.role, &usage.memory)),
            Some(BlobEntry {
                file: naming::blob_file(owner, &usage.memory),
                section: naming::blob_section(owner, &usage.source_memory, &usage.memory),
                size: usage.used,
                hash: String::new(),
            }),
        ),
        role => (
            Some(naming::zeroed_section(owner, role, &usage.memory)),
            None,
        ),
    };
    let app_bound = section.is_some() && layout.app_bound(&usage.memory);
    ArenaEntry {
        name: naming::arena_name(usage.role, &usage.memory),
        role: usage.role,
        memory: usage.memory.clone(),
        source_memory: usage.source_memory.clone(),
        size: usage.used,
        budget: (usage.total_size != u64::MAX).then_some(usage.total_size),
        alignment: usage.alignment,
        section: section.filter(|_| !app_bound),
        blob,
        app_bound,
    }
}

/// The arena entries of `plan` for model `model`: sections and blobs named from the model,
/// budgets from `layout`.
pub(super) fn arena_entries(model: &str, plan: &MemoryPlan, layout: &Layout) -> Arenas {
    let mut memories: BTreeMap<&str, Option<u64>> = BTreeMap::new();
    let mut arenas = Vec::new();
    let mut arena_index = BTreeMap::new();
    for usage in plan.arenas() {
        let constraint = layout.constraints.iter().find(|c| c.name == usage.memory);
        memories.insert(&usage.memory, constraint.and_then(|c| c.max_size));
        if usage.is_staged() {
            memories.entry(&usage.source_memory).or_insert(None);
        }
        arena_index.insert((usage.role, usage.memory.clone()), arenas.len());
        arenas.push(arena_entry(model, usage, layout));
    }
    let memories = memories
        .into_iter()
        .map(|(name, budget)| MemoryEntry {
            name: name.to_string(),
            budget,
        })
        .collect();
    (memories, arenas, arena_index)
}

/// The placed tensors of `graph`, in graph order (aliases without their own slot take their
/// target's), and graph index → plan file index.
pub(super) fn tensor_entries(
    graph: &Graph,
    plan: &MemoryPlan,
    layout: &Layout,
    arena_index: &BTreeMap<(ArenaRole, String), usize>,
) -> Result<(Vec<TensorEntry>, BTreeMap<usize, u32>)> {
    let model = &graph.name;
    // Placed tensors, in graph order; aliases without their own slot take their
    // target's.
    let alias_target: BTreeMap<usize, usize> = graph
        .aliases
        .iter()
        .map(|&(a, t)| (a.get(), t.get()))
        .collect();
    let root = |i: usize| {
        crate::graph::alias_root(i, graph.tensors.len(), |i| alias_target.get(&i).copied())
    };
    let mut number: BTreeMap<usize, u32> = BTreeMap::new();
    let mut tensors = Vec::new();
    for (i, t) in graph.tensors.iter().enumerate() {
        let own = plan.tensor_allocs.get(&t.id);
        let alloc = own.or_else(|| plan.tensor_allocs.get(&graph.tensors[root(i)].id));
        let Some(alloc) = alloc else { continue };
        let binding = alloc.binding.clone().ok_or_else(|| {
            Error::input(format!(
                "tensor `{}` of model `{model}` has a slot but no binding; plan it with a planner that records bindings",
                t.id
            ))
        })?;
        let Some(&arena) = arena_index.get(&(binding.role, binding.memory.clone())) else {
            return Err(Error::input(format!(
                "tensor `{}` is bound to the {} arena in {}, which the plan does not have; re-plan",
                t.id,
                binding.role.name(),
                binding.memory
            )));
        };
        let lifetime = plan
            .tensor_lifetimes
            .get(&t.id)
            .or_else(|| plan.tensor_lifetimes.get(&graph.tensors[root(i)].id))
            .map(|l| Lifetime {
                start_op: l.start_op,
                end_op: l.end_op,
            })
            .unwrap_or(Lifetime {
                start_op: 0,
                end_op: u32::try_from(graph.ops.len().saturating_sub(1)).unwrap_or(u32::MAX),
            });
        let constraint = layout.constraints.iter().find(|c| c.name == binding.memory);
        let alignment = [
            layout.min_alignment,
            t.dtype.align(),
            t.align_hint.unwrap_or(1),
            constraint
                .and_then(|c| c.arena_alignment)
                .map_or(1, |a| a.max(layout.min_alignment)),
        ]
        .into_iter()
        .max()
        .unwrap_or(1)
        .max(1);
        number.insert(i, u32::try_from(tensors.len()).unwrap_or(u32::MAX));
        tensors.push(TensorEntry {
            id: t.id.clone(),
            name: t.name.clone(),
            dtype: t.dtype,
            shape: t.shape.clone(),
            size: t.size,
            kind: t.kind,
            quantization: t.quantization.clone(),
            lifetime,
            arena: u32::try_from(arena).unwrap_or(u32::MAX),
            offset: binding.offset,
            alignment,
            alias_of: None,
        });
    }
    for (i, _) in graph.tensors.iter().enumerate() {
        let r = root(i);
        if r != i
            && let (Some(&n), Some(&rn)) = (number.get(&i), number.get(&r))
        {
            tensors[n as usize].alias_of = Some(rn);
        }
    }
    Ok((tensors, number))
}

/// The plan file index of graph tensor `t`; an error naming `what` when it was not placed.
pub(super) fn renumber(
    graph: &Graph,
    number: &BTreeMap<usize, u32>,
    t: TensorIndex,
    what: &dyn Fn() -> String,
) -> Result<u32> {
    number.get(&t.get()).copied().ok_or_else(|| {
        let id = graph.tensors.get(t.get()).map_or("?", |t| t.id.as_str());
        Error::input(format!(
            "{} uses tensor `{id}`, which the plan did not place; plan every tensor the model's ops touch",
            what()
        ))
    })
}

/// The graph's patch plan with its tensors renumbered as the plan file's.
pub(super) fn patches(
    graph: &Graph,
    number: &BTreeMap<usize, u32>,
) -> Result<Option<patch::PatchPlan>> {
    let Some(p) = &graph.patches else {
        return Ok(None);
    };
    let mut out = p.clone();
    for t in &mut out.tensors {
        t.tensor = renumber(graph, number, TensorIndex(t.tensor), &|| {
            "the patch stage".to_string()
        })?;
    }
    Ok(Some(out))
}

/// The graph's control entries with their tensors renumbered as the plan file's.
pub(super) fn control(
    graph: &Graph,
    number: &BTreeMap<usize, u32>,
) -> Result<Vec<planner_planfile::Control>> {
    use planner_planfile::Control;
    graph
        .control
        .iter()
        .map(|c| {
            let t = renumber(graph, number, TensorIndex(c.tensor()), &|| {
                format!("the {} of the model", c.name())
            })?;
            Ok(match *c {
                Control::If {
                    then_ops, else_ops, ..
                } => Control::If {
                    cond: t,
                    then_ops,
                    else_ops,
                },
                Control::While {
                    cond_ops, body_ops, ..
                } => Control::While {
                    cond: t,
                    cond_ops,
                    body_ops,
                },
                Control::Once { ops, .. } => Control::Once { flag: t, ops },
            })
        })
        .collect()
}

/// The ops of `graph` with their tensors renumbered.
pub(super) fn op_entries(graph: &Graph, number: &BTreeMap<usize, u32>) -> Result<Vec<OpEntry>> {
    let renumber = |t: TensorIndex, what: &dyn Fn() -> String| renumber(graph, number, t, what);
    let mut ops = Vec::new();
    for (k, op) in graph.ops.iter().enumerate() {
        let what = || format!("op {k} ({})", op.opcode);
        let in_place = graph
            .in_place
            .iter()
            .find(|p| op.outputs.contains(&p.output))
            .and_then(|p| {
                let pos = |list: &[TensorIndex], t| list.iter().position(|&x| x == t);
                let inputs: Vec<TensorIndex> = op
                    .inputs
                    .iter()
                    .map(|t| t.unwrap_or(TensorIndex(u32::MAX)))
                    .collect();
                Some(InPlaceEntry {
                    input: pos(&inputs, p.input)? as u32,
                    output: pos(&op.outputs, p.output)? as u32,
                    temp: match p.temp {
                        Some(t) => Some(pos(&op.scratch, t)? as u32),
                        None => None,
                    },
                    rows: p.rows,
                })
            });
        let (prepared, kernel_scratch) = prepared_entries(graph, op);
        ops.push(OpEntry {
            opcode: op.opcode.clone(),
            inputs: op
                .inputs
                .iter()
                .map(|i| i.map(|t| renumber(t, &what)).transpose())
                .collect::<Result<_>>()?,
            outputs: op
                .outputs
                .iter()
                .map(|&t| renumber(t, &what))
                .collect::<Result<_>>()?,
            scratch: op
                .scratch
                .iter()
                .map(|&t| renumber(t, &what))
                .collect::<Result<_>>()?,
            options: op.options,
            in_place,
            prepared,
            kernel_scratch,
        });
    }
    Ok(ops)
}

/// What [`crate::prepare`] added to `op`, as positions in its inputs and scratch.
fn prepared_entries(graph: &Graph, op: &crate::graph::Op) -> (Option<PreparedEntry>, Vec<u32>) {
    let Some(p) = graph.prepared_of(op) else {
        return (None, Vec::new());
    };
    let prepared = p.constant.and_then(|(layout, t)| {
        let input = op.inputs.iter().position(|&i| i == Some(t))?;
        Some(PreparedEntry {
            layout,
            input: u32::try_from(input).ok()?,
        })
    });
    let scratch = op
        .scratch
        .iter()
        .enumerate()
        .filter(|(_, t)| p.scratch.contains(t))
        .filter_map(|(j, _)| u32::try_from(j).ok())
        .collect();
    (prepared, scratch)
}
