//! The independent checker every plan must pass.
//!
//! Written apart from the packers and the pipeline: it reads only the graph, the plan and
//! the platform's rules, and re-derives everything it checks. No two tensors that are live at
//! a common op share bytes in one arena (unless one aliases the other), every slot is aligned
//! and inside its arena, `used` and `total_size` agree, every budget is kept, every used
//! tensor is bound, every constant arena has one source memory.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::fmt;
use std::ops::Bound;
use std::string::String;
use std::vec::Vec;

use crate::graph::{Graph, Tensor, TensorIndex, TensorKind};
use crate::manifest::Manifest;
use crate::par::{PARALLEL_FROM, both};
use crate::plan::{ArenaRole, MemoryPlan, TensorAllocation, TensorLifetime};

mod in_place_rule;
mod patch_rule;
mod unit;
pub use unit::{Member, Unit, verify_group, verify_unit};

/// One thing wrong with a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    message: String,
}

impl Violation {
    fn new(message: String) -> Violation {
        Violation { message }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// What the platform asks of a plan beyond the graph itself.
#[derive(Debug, Clone, Default)]
pub struct VerifyRules {
    /// Every slot's offset must be a multiple of this.
    pub min_alignment: u64,
    /// Per memory: extra slot alignment (a constraint's `arena_alignment`).
    pub memory_alignment: BTreeMap<String, u64>,
    /// Per memory: the most bytes all its arenas may take together.
    pub budgets: BTreeMap<String, u64>,
}

impl VerifyRules {
    /// The rules a manifest implies.
    pub fn from_manifest(m: &Manifest) -> VerifyRules {
        let mut r = VerifyRules {
            min_alignment: m.platform.min_alignment,
            ..VerifyRules::default()
        };
        for mem in &m.platform.memories {
            r.memory_alignment
                .insert(mem.name.clone(), m.memory_alignment(&mem.name));
            if let Some(b) = m.budget(&mem.name) {
                r.budgets.insert(mem.name.clone(), b);
            }
        }
        r
    }
}

/// Checks `plan` against `graph` alone: alignment from dtypes and hints, no budgets.
pub fn verify(graph: &Graph, plan: &MemoryPlan) -> Result<(), Vec<Violation>> {
    verify_with(graph, plan, &VerifyRules::default())
}

/// Checks `plan` against `graph` and the platform's rules: [`verify_unit`] for a unit of
/// one.
pub fn verify_with(
    graph: &Graph,
    plan: &MemoryPlan,
    rules: &VerifyRules,
) -> Result<(), Vec<Violation>> {
    verify_unit(&Unit::one(graph, plan), rules)
}

/// The check of one model's plan against its graph and the platform's alignment rules
/// (the budgets are the unit's, [`verify_unit`]): every message found.
fn check_model(graph: &Graph, plan: &MemoryPlan, rules: &VerifyRules) -> Vec<String> {
    // On large graphs the two halves of each step run on two threads; the messages keep
    // their order.
    let parallel = graph.tensors.len() >= PARALLEL_FROM;
    let (entries, mut messages) = entries(graph, plan, parallel);
    let (tensors, overlaps) = both(
        parallel,
        || {
            let mut out = Vec::new();
            let mut bad = |m: String| out.push(m);
            let used = true_use(graph);
            for (i, t) in graph.tensors.iter().enumerate() {
                check_tensor(graph, (t, used[i]), entries[i], plan, rules, &mut bad);
            }
            check_arenas(plan, &mut bad);
            out.extend(patch_rule::checks(graph));
            out
        },
        || {
            let (groups, rows, mut bad) = slot_groups(graph, &entries);
            bad.extend(live_overlaps(graph, &entries, &groups, &rows));
            bad
        },
    );
    messages.extend(tensors);
    messages.extend(overlaps);
    messages.extend(control_rule(graph, &entries));
    messages
}

/// A graph with control flow ([`Graph::control`]): each condition is live where it is read
/// and every tensor that lives into or out of a loop lives over all of it, in the plan's
/// lifetimes (the rule the plan-file reader applies too).
fn control_rule(graph: &Graph, entries: &[Entry<'_>]) -> Option<String> {
    if graph.control.is_empty() {
        return None;
    }
    let live = |t: u32| {
        entries
            .get(t as usize)
            .and_then(|e| e.1)
            .map(|l| (l.start_op, l.end_op))
    };
    let name = |t: u32| {
        graph
            .tensors
            .get(t as usize)
            .map_or_else(|| format!("#{t}"), |x| format!("`{}`", x.id))
    };
    let n = u32::try_from(graph.tensors.len()).unwrap_or(u32::MAX);
    planner_planfile::control::check_lifetimes(&graph.control, &live, n, &name).err()
}

/// A tensor's allocation and lifetime in the plan, either possibly missing.
type Entry<'p> = (Option<&'p TensorAllocation>, Option<&'p TensorLifetime>);

/// Per tensor (by index), its plan entries, and a message for each allocation of an id the
/// graph lacks. One hash of each id and one walk of each map, instead of a search of the
/// maps per tensor: on 10^6 tensors the searches' string comparisons were most of the check.
fn entries<'p>(
    graph: &Graph,
    plan: &'p MemoryPlan,
    parallel: bool,
) -> (Vec<Entry<'p>>, Vec<String>) {
    let index: HashMap<&str, usize> = graph
        .tensors
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    let n = graph.tensors.len();
    let ((allocs, extra), lifetimes) = both(
        parallel,
        || {
            let mut at: Vec<Option<&'p TensorAllocation>> = vec![None; n];
            let mut extra = Vec::new();
            for (id, a) in &plan.tensor_allocs {
                match index.get(id.as_str()) {
                    Some(&i) => at[i] = Some(a),
                    None => extra.push(format!(
                        "the plan places `{id}`, which the graph does not have"
                    )),
                }
            }
            (at, extra)
        },
        || {
            let mut at: Vec<Option<&'p TensorLifetime>> = vec![None; n];
            for (id, l) in &plan.tensor_lifetimes {
                if let Some(&i) = index.get(id.as_str()) {
                    at[i] = Some(l);
                }
            }
            at
        },
    );
    (allocs.into_iter().zip(lifetimes).collect(), extra)
}

/// Per tensor, the first and last op that touch it (the model's inputs at op 0, its outputs
/// at the last op); `None` for a tensor nothing touches.
fn true_use(graph: &Graph) -> Vec<Option<(u64, u64)>> {
    let n_ops = graph.ops.len() as u64;
    let mut used: Vec<Option<(u64, u64)>> = vec![None; graph.tensors.len()];
    let mut touch = |i: usize, op: u64| {
        used[i] = Some(match used[i] {
            None => (op, op),
            Some((s, e)) => (s.min(op), e.max(op)),
        });
    };
    for (k, op) in graph.ops.iter().enumerate() {
        for t in op.tensors() {
            touch(t.get(), k as u64);
        }
    }
    for io in &graph.inputs {
        touch(io.tensor.get(), 0);
    }
    for io in &graph.outputs {
        touch(io.tensor.get(), n_ops.saturating_sub(1));
    }
    // A patch stage pins the split tensor from op 0 and a resident input to the split op.
    let n = graph.tensors.len();
    for (t, op) in patch_rule::pinned_uses(graph) {
        if t.get() < n {
            touch(t.get(), op as u64);
        }
    }
    used
}

/// One tensor's slot: allocation and binding agree, size, role, alignment, arena bounds,
/// and a lifetime that covers its true use (`used`; constants and state: the whole run).
fn check_tensor(
    graph: &Graph,
    (t, used): (&Tensor, Option<(u64, u64)>),
    (alloc, lifetime): Entry<'_>,
    plan: &MemoryPlan,
    rules: &VerifyRules,
    bad: &mut impl FnMut(String),
) {
    let n_ops = graph.ops.len() as u64;
    let needs = t.kind != TensorKind::Activation || used.is_some();
    let Some(alloc) = alloc else {
        if needs {
            bad(format!(
                "tensor `{}` ({}) is used but has no allocation",
                t.id, t.name
            ));
        }
        return;
    };
    let Some(b) = &alloc.binding else {
        bad(format!("tensor `{}` has no binding", t.id));
        return;
    };
    if alloc.offset != b.offset || alloc.memory != b.memory {
        bad(format!(
            "tensor `{}`: allocation says {}@{}, binding says {}@{}",
            t.id, alloc.memory, alloc.offset, b.memory, b.offset
        ));
    }
    if alloc.size != t.size {
        bad(format!(
            "tensor `{}` is {} bytes but its slot is {}",
            t.id, t.size, alloc.size
        ));
    }
    let want_role = match t.kind {
        TensorKind::Activation => ArenaRole::Scratch,
        TensorKind::Constant => ArenaRole::Constant,
        TensorKind::Variable => ArenaRole::Persistent,
    };
    if b.role != want_role {
        bad(format!(
            "tensor `{}` is {:?} but bound as {}",
            t.id,
            t.kind,
            b.role.name()
        ));
    }
    if b.role != ArenaRole::Constant && b.source_memory != b.memory {
        bad(format!(
            "{} tensor `{}` has a source memory different from its memory",
            b.role.name(),
            t.id
        ));
    }
    let align = t
        .dtype
        .align()
        .max(t.align_hint.unwrap_or(1))
        .max(rules.min_alignment.max(1))
        .max(rules.memory_alignment.get(&b.memory).copied().unwrap_or(1));
    if b.offset % align != 0 {
        bad(format!(
            "tensor `{}` at offset {} in {} is not {align}-aligned",
            t.id, b.offset, b.memory
        ));
    }
    match plan.arena(b.role, &b.memory) {
        None => bad(format!(
            "tensor `{}` is bound to a {} arena in {} that the plan lacks",
            t.id,
            b.role.name(),
            b.memory
        )),
        Some(a) => {
            if b.offset.checked_add(t.size).is_none_or(|end| end > a.used) {
                bad(format!(
                    "tensor `{}` at {}+{} passes the end of the {} arena in {} ({} bytes)",
                    t.id,
                    b.offset,
                    t.size,
                    a.role.name(),
                    a.memory,
                    a.used
                ));
            }
            if a.role == ArenaRole::Constant && a.source_memory != b.source_memory {
                bad(format!(
                    "constant `{}` comes from {} but its arena in {} is staged from {}",
                    t.id, b.source_memory, a.memory, a.source_memory
                ));
            }
            if a.alignment < align || !a.alignment.is_power_of_two() {
                bad(format!(
                    "arena {} {} is aligned to {}, below slot alignment {align}",
                    a.role.name(),
                    a.memory,
                    a.alignment
                ));
            }
        }
    }
    let Some(lt) = lifetime else {
        bad(format!("tensor `{}` has no lifetime in the plan", t.id));
        return;
    };
    if lt.start_op > lt.end_op {
        bad(format!(
            "tensor `{}` has lifetime {}..={}, which ends before it starts",
            t.id, lt.start_op, lt.end_op
        ));
    }
    let whole = t.kind != TensorKind::Activation;
    let need = if whole {
        Some((0, n_ops.saturating_sub(1)))
    } else {
        used
    };
    if let Some((s, e)) = need
        && (u64::from(lt.start_op) > s || u64::from(lt.end_op) < e)
    {
        bad(format!(
            "tensor `{}` is used over ops {s}..={e} but the plan keeps it only over {}..={}",
            t.id, lt.start_op, lt.end_op
        ));
    }
}

/// Arenas: used within total and the largest arena.
fn check_arenas(plan: &MemoryPlan, bad: &mut impl FnMut(String)) {
    for a in plan.arenas() {
        if a.used > a.total_size {
            bad(format!(
                "{} arena in {} uses {} of {} bytes",
                a.role.name(),
                a.memory,
                a.used,
                a.total_size
            ));
        }
        if a.used > crate::plan::MAX_ARENA {
            bad(format!(
                "{} arena in {} takes {} bytes, more than the largest arena, {}",
                a.role.name(),
                a.memory,
                a.used,
                crate::plan::MAX_ARENA
            ));
        }
    }
}

/// One slot for the overlap sweep: bytes `[start, end)` over ops `first..=last`.
#[derive(Clone, Copy)]
struct Slot {
    start: u64,
    end: u64,
    first: u32,
    last: u32,
    tensor: usize,
}

/// Messages for every pair of tensors live at a common op that share bytes in one arena
/// (members of one alias group at one offset excepted).
///
/// A sweep over ops per arena, not a comparison of all pairs at overlapping offsets: the
/// slots live at one op are disjoint byte ranges in a map by offset, so a slot that starts
/// need only be compared with its neighbours there. `O(n log n)` plus the faults found.
fn live_overlaps(
    graph: &Graph,
    entries: &[Entry<'_>],
    alias_group: &[usize],
    rows: &[crate::graph::InPlaceOp],
) -> Vec<String> {
    let mut arenas: BTreeMap<(ArenaRole, &str), Vec<Slot>> = BTreeMap::new();
    // Row-overlap outputs (checked by `check_in_place`): at their op, the input's bytes.
    let shared: BTreeMap<usize, (u64, u64)> = rows
        .iter()
        .filter_map(|p| {
            let a = entries[p.input.get()].0?;
            Some((p.output.get(), (a.offset, a.offset.saturating_add(graph.tensor(p.input).size))))
        })
        .collect();
    for (i, t) in graph.tensors.iter().enumerate() {
        if t.size == 0 {
            continue;
        }
        let (alloc, lifetime) = entries[i];
        let Some(b) = alloc.and_then(|a| a.binding.as_ref()) else {
            continue;
        };
        // A tensor without a lifetime (already a fault) is taken as live throughout.
        let (first, last) = lifetime.map_or((0, u32::MAX), |l| (l.start_op, l.end_op));
        let (start, end) = (b.offset, b.offset.saturating_add(t.size));
        let slots = arenas.entry((b.role, b.memory.as_str())).or_default();
        let mut push = |start: u64, end: u64, first: u32, last: u32| {
            if start < end && first <= last {
                slots.push(Slot {
                    start,
                    end,
                    first,
                    last,
                    tensor: i,
                });
            }
        };
        match shared.get(&i) {
            // At its op the output is its bytes outside the input's, then all of them.
            Some(&(from, to)) => {
                push(start, end.min(from), first, first);
                push(start.max(to), end, first, first);
                push(start, end, first.saturating_add(1), last);
            }
            None => push(start, end, first, last),
        }
    }
    let mut out = Vec::new();
    for ((role, memory), mut slots) in arenas {
        slots.sort_by_key(|s| (s.first, s.start, s.tensor));
        let report = |a: &Slot, b: &Slot| {
            let (a, b) = if (a.start, a.tensor) <= (b.start, b.tensor) {
                (a, b)
            } else {
                (b, a)
            };
            format!(
                "tensors `{}` [{}, {}) and `{}` [{}, {}) share bytes in the {} arena of {memory} while both are live",
                graph.tensors[a.tensor].id,
                a.start,
                a.end,
                graph.tensors[b.tensor].id,
                b.start,
                b.end,
                role.name()
            )
        };
        // Live slots by (offset, alias group): each entry's members by (end, slot index).
        let mut live: BTreeMap<(u64, usize), BTreeSet<(u64, usize)>> = BTreeMap::new();
        let mut ending: BinaryHeap<Reverse<(u32, usize)>> = BinaryHeap::new();
        for (k, s) in slots.iter().enumerate() {
            while let Some(&Reverse((last, j))) = ending.peek() {
                if last >= s.first {
                    break;
                }
                ending.pop();
                let key = (slots[j].start, alias_group[slots[j].tensor]);
                if let Some(members) = live.get_mut(&key) {
                    members.remove(&(slots[j].end, j));
                    if members.is_empty() {
                        live.remove(&key);
                    }
                }
            }
            let key = (s.start, alias_group[s.tensor]);
            let end_of = |m: &BTreeSet<(u64, usize)>| m.last().copied();
            if let Some((_, members)) = live.range(..key).next_back()
                && let Some((e, j)) = end_of(members)
                && e > s.start
            {
                out.push(report(&slots[j], s));
            }
            for (_, members) in live
                .range((Bound::Excluded(key), Bound::Unbounded))
                .take_while(|((o, _), _)| *o < s.end)
            {
                if let Some((_, j)) = end_of(members) {
                    out.push(report(&slots[j], s));
                }
            }
            live.entry(key).or_default().insert((s.end, k));
            ending.push(Reverse((s.last, k)));
        }
    }
    out
}

/// Per tensor, the smallest index of its slot group: its alias group, joined with the other
/// side of each in-place pair that [`check_in_place`] accepts; the row-overlap pairs it
/// accepts; a message for each pair it refuses (that pair's overlap is then reported as
/// any other).
fn slot_groups(
    graph: &Graph,
    entries: &[Entry<'_>],
) -> (Vec<usize>, Vec<crate::graph::InPlaceOp>, Vec<String>) {
    let mut bad = Vec::new();
    let classes = AliasClasses::new(graph, entries);
    let mut rows = Vec::new();
    let pairs = graph
        .in_place
        .iter()
        .filter_map(|p| match check_in_place(graph, entries, &classes, p) {
            // A row-overlap pair keeps two slots; the sweep sees the output from the op
            // after, and at the op only its bytes outside the input's.
            Ok(()) if p.rows => {
                rows.push(*p);
                None
            }
            Ok(()) => Some((p.output, p.input)),
            Err(m) => {
                bad.push(m);
                None
            }
        });
    let pairs: Vec<_> = pairs.collect();
    let groups = joined(graph.tensors.len(), graph.aliases.iter().chain(&pairs));
    (groups, rows, bad)
}

/// Per tensor of `n`, the smallest index of its group once each of `pairs` is joined
/// (pairs naming a tensor past `n` are skipped).
fn joined<'a>(n: usize, pairs: impl Iterator<Item = &'a (TensorIndex, TensorIndex)>) -> Vec<usize> {
    let mut g: Vec<usize> = (0..n).collect();
    fn find(g: &mut [usize], mut x: usize) -> usize {
        while g[x] != x {
            g[x] = g[g[x]];
            x = g[x];
        }
        x
    }
    for &(a, b) in pairs {
        if a.get() >= n || b.get() >= n {
            continue;
        }
        let (ra, rb) = (find(&mut g, a.get()), find(&mut g, b.get()));
        let (lo, hi) = (ra.min(rb), ra.max(rb));
        g[hi] = lo;
    }
    (0..n).map(|i| find(&mut g, i)).collect()
}

/// The alias classes of a graph (its `aliases` only, not the in-place pairs), each with the
/// ops its members are live over in the plan. Empty when the graph runs nothing in place
/// (no pair asks).
struct AliasClasses {
    /// Per tensor, the smallest index of its class.
    root: Vec<usize>,
    /// Per class root: its first and last live op, each with the member live then.
    span: Vec<Option<Span>>,
}

/// A class's `(first op, member)` and `(last op, member)`.
type Span = ((u32, usize), (u32, usize));

impl AliasClasses {
    fn new(graph: &Graph, entries: &[Entry<'_>]) -> AliasClasses {
        if graph.in_place.is_empty() {
            return AliasClasses {
                root: Vec::new(),
                span: Vec::new(),
            };
        }
        let root = joined(graph.tensors.len(), graph.aliases.iter());
        let mut span: Vec<Option<Span>> = vec![None; root.len()];
        for (i, &r) in root.iter().enumerate() {
            let Some(l) = entries.get(i).and_then(|e| e.1) else {
                continue;
            };
            let (first, last) = ((l.start_op, i), (l.end_op, i));
            span[r] = Some(match span[r] {
                None => (first, last),
                Some((f, e)) => (f.min(first), e.max(last)),
            });
        }
        AliasClasses { root, span }
    }

    /// The first op any member of `t`'s class is live at, with that member.
    fn first(&self, t: usize) -> Option<(u32, usize)> {
        Some((*self.span.get(*self.root.get(t)?)?)?.0)
    }

    /// The last op any member of `t`'s class is live at, with that member.
    fn last(&self, t: usize) -> Option<(u32, usize)> {
        Some((*self.span.get(*self.root.get(t)?)?)?.1)
    }
}

/// Checks one declared in-place pair on its own terms: the op that writes the output may run
/// in place over that input (the op-kind table's rule, checked by this module's own code,
/// `in_place_rule`); the input is read by no later op and is not a model output; in the plan,
/// the input's lifetime (with every alias of it) ends at that op, the output's (with every
/// alias of it) starts there, and both are at one offset of one arena.
fn check_in_place(
    graph: &Graph,
    entries: &[Entry<'_>],
    classes: &AliasClasses,
    p: &crate::graph::InPlaceOp,
) -> Result<(), String> {
    let n = graph.tensors.len();
    if p.input.get() >= n || p.output.get() >= n {
        return Err("an in-place pair names a tensor the graph does not have".into());
    }
    let (it, ot) = (graph.tensor(p.input), graph.tensor(p.output));
    let pair = format!("`{}` written in place over `{}`", ot.id, it.id);
    let Some(k) = graph.producer(p.output) else {
        return Err(format!("{pair}: no op writes `{}`", ot.id));
    };
    let op = &graph.ops[k];
    let refuse = |why: String| format!("{pair} at op {k} ({}): {why}", op.opcode);
    let Some(input) = op.inputs.iter().position(|&t| t == Some(p.input)) else {
        return Err(refuse(format!("the op does not read `{}`", it.id)));
    };
    let output = op.outputs.iter().position(|&t| t == p.output).unwrap_or(0);
    let rows = if p.rows {
        if p.temp.is_some() {
            return Err(refuse("an op with row overlap has no temporary".into()));
        }
        Some(in_place_rule::may_overlap_rows(graph, op, input, output).map_err(refuse)?)
    } else {
        in_place_rule::may_overwrite(graph, op, input, output).map_err(refuse)?;
        None
    };
    if let Some(later) =
        (k + 1..graph.ops.len()).find(|&j| graph.ops[j].tensors().any(|t| t == p.input))
    {
        return Err(refuse(format!(
            "op {later} ({}) reads `{}` later",
            graph.ops[later].opcode, it.id
        )));
    }
    if graph.outputs.iter().any(|x| x.tensor == p.input) {
        return Err(refuse(format!("`{}` is a model output", it.id)));
    }
    if let Some(t) = p.temp
        && !op.scratch.contains(&t)
    {
        return Err(refuse(
            "its temporary is not one of the op's scratch tensors".into(),
        ));
    }
    let (Some(ia), Some(il)) = entries[p.input.get()] else {
        return Err(refuse(format!("`{}` is not placed", it.id)));
    };
    let (Some(oa), Some(ol)) = entries[p.output.get()] else {
        return Err(refuse(format!("`{}` is not placed", ot.id)));
    };
    let k32 = k as u32;
    if il.end_op != k32 || ol.start_op != k32 {
        return Err(refuse(format!(
            "`{}` lives to op {} and `{}` from op {}; both must be op {k}, where they share bytes",
            it.id, il.end_op, ot.id, ol.start_op
        )));
    }
    // The pair joins the two alias classes into one slot group: a member of the output's
    // class live before the op, or of the input's after it, would share the bytes with the
    // other class's members while both are live, and the group hides that overlap.
    if let Some((start, t)) = classes.first(p.output.get())
        && start < k32
    {
        return Err(refuse(format!(
            "`{}`, an alias of `{}`, is live from op {start}; every alias of an in-place output must start at op {k}, where the input's bytes die",
            graph.tensors[t].id, ot.id
        )));
    }
    if let Some((end, t)) = classes.last(p.input.get())
        && end > k32
    {
        return Err(refuse(format!(
            "`{}`, an alias of `{}`, is live until op {end}; every alias of an in-place input must die at op {k}, where the output's bytes start",
            graph.tensors[t].id, it.id
        )));
    }
    let at = |a: &TensorAllocation| {
        a.binding
            .as_ref()
            .map(|b| (b.role, b.memory.clone(), b.offset))
    };
    if let Some(rows) = rows {
        return rows_offsets(&rows, (it, ia), (ot, oa)).map_err(refuse);
    }
    if at(ia) != at(oa) || at(ia).is_none() {
        return Err(refuse(format!(
            "`{}` is at {} offset {} and `{}` at {} offset {}; an in-place output starts at its input's offset in the same arena",
            it.id, ia.memory, ia.offset, ot.id, oa.memory, oa.offset
        )));
    }
    Ok(())
}

/// With row overlap: input `it` and output `ot` are in one arena, the input at least
/// [`Rows::min_shift`](crate::rt::rows::Rows::min_shift) whole elements after the output
/// and at most the output's bytes after it (the op's buffer is the two slots, no gap).
fn rows_offsets(
    rows: &crate::rt::rows::Rows,
    (it, ia): (&crate::graph::Tensor, &TensorAllocation),
    (ot, oa): (&crate::graph::Tensor, &TensorAllocation),
) -> Result<(), String> {
    let arena = |a: &TensorAllocation| a.binding.as_ref().map(|b| (b.role, b.memory.clone()));
    let elem = ot.dtype.bytes_for(1).unwrap_or(1).max(1);
    let need = (rows.min_shift() as u64).saturating_mul(elem);
    let shift = ia.offset.checked_sub(oa.offset);
    match shift {
        Some(d) if arena(ia) == arena(oa) && arena(ia).is_some() && d >= need && d.is_multiple_of(elem) && d <= ot.size => Ok(()),
        _ => Err(format!(
            "`{}` is at {} offset {} and `{}` at {} offset {}; with row overlap the input starts {need} to {} bytes after the output, in whole elements, in the same arena",
            it.id, ia.memory, ia.offset, ot.id, oa.memory, oa.offset, ot.size
        )),
    }
}

impl std::error::Error for Violation {}
