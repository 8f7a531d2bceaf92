//! Row overlap (`memory.row_overlap`): convolutions and pools write their output rows over
//! the input rows they have read ([`crate::rt::rows`]), when that lowers the scratch peak.
//!
//! Each such op joins its input's slot and its output's at a fixed distance: the input
//! starts [`Rows::min_shift`] elements (rounded up to the bank's slot alignment) after the
//! output, and the two share bytes at that op only. The packers place slots with one
//! offset each and know nothing of such joins, so the slots joined this way (chains of
//! them: a pointwise convolution's output is the next depthwise convolution's input) are
//! placed here as one piece each, of several slots at fixed distances, each with its own
//! lifetime, first fit from the largest piece down; every scratch slot of the bank then
//! goes to the pipeline as a fixed offset. The plan is kept only when its scratch peak is
//! below the plan without row overlap.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::vec::Vec;

use super::inputs::Inputs;
use super::{Planned, plan_with, scratch_bytes};
use crate::error::Result;
use crate::graph::{Graph, InPlaceOp, TensorIndex, TensorKind};
use crate::lifetimes;
use crate::manifest::Manifest;
use crate::plan::ArenaRole;
use crate::rt::rows::Rows;

/// Scratch slots above which the placement here is not tried (it compares every placed
/// slot with every candidate offset).
const MAX_SLOTS: usize = 2048;

/// Row-overlap candidates tried (each packs every piece again), at the busiest ops first.
const MAX_TRIES: usize = 64;

/// The op `k` of `graph` may run with row overlap over its input 0: its geometry, input
/// and output. The op has one output, first live there, read later and written by no
/// in-place op (`written`); its input is read last there, by it once, is no model output
/// and no in-place op's input or reshape alias (`taken`); both are activations of one
/// element type the kernels run on regions (the patch stage's rule,
/// `planner_planfile::patch::stage_op`).
fn candidate(
    graph: &Graph,
    k: usize,
    uses: &[(usize, usize)],
    (taken, written): (&[bool], &[bool]),
) -> Option<(Rows, TensorIndex, TensorIndex)> {
    let op = &graph.ops[k];
    let (&[o], Some(Some(i))) = (op.outputs.as_slice(), op.inputs.first()) else {
        return None;
    };
    let (x, y) = (graph.tensor(*i), graph.tensor(o));
    let usize_shape = |s: &[u64]| -> Option<Vec<usize>> {
        s.iter().map(|&d| usize::try_from(d).ok()).collect()
    };
    let filter = match op.inputs.get(1) {
        Some(Some(f)) => Some(usize_shape(&graph.tensor(*f).shape)?),
        _ => None,
    };
    let rows = Rows::of(
        &op.options,
        &usize_shape(&x.shape)?,
        &usize_shape(&y.shape)?,
        filter.as_deref(),
    )?;
    let io = |t: TensorIndex| {
        graph.inputs.iter().any(|x| x.tensor == t) || graph.outputs.iter().any(|x| x.tensor == t)
    };
    let reads = op.inputs.iter().filter(|&&t| t == Some(*i)).count();
    (x.kind == TensorKind::Activation
        && y.kind == TensorKind::Activation
        && x.dtype == y.dtype
        && planner_planfile::patch::stage_op(&op.opcode, y.dtype, false).is_ok()
        && reads == 1
        && *i != o
        && uses[i.get()].1 == k
        && uses[o.get()] == (k, uses[o.get()].1)
        && uses[o.get()].1 > k
        && !graph.outputs.iter().any(|x| x.tensor == *i)
        && !io(o)
        && !taken[i.get()]
        && !written[o.get()])
    .then_some((rows, *i, o))
}

/// The ops of `graph` that may run with row overlap, as in-place pairs marked `rows`.
fn candidates(graph: &Graph) -> Vec<(InPlaceOp, Rows)> {
    if graph.patches.is_some() || !graph.control.is_empty() {
        return Vec::new();
    }
    let n = graph.tensors.len();
    // (first, last) op that names each tensor.
    let mut uses = vec![(usize::MAX, 0usize); n];
    for (k, op) in graph.ops.iter().enumerate() {
        for t in op.tensors() {
            let u = &mut uses[t.get()];
            *u = (u.0.min(k), u.1.max(k));
        }
    }
    // Tensors a reshape alias or an in-place pair holds already: an in-place output may
    // still be a row-overlap input (its slot's lifetime ends where it is read last), and a
    // row-overlap output an in-place input.
    let mut aliased = vec![false; n];
    for &(a, b) in &graph.aliases {
        aliased[a.get()] = true;
        aliased[b.get()] = true;
    }
    let (mut taken, mut written) = (aliased.clone(), aliased);
    for p in &graph.in_place {
        taken[p.input.get()] = true;
        written[p.output.get()] = true;
    }
    let mut out = Vec::new();
    for k in 0..graph.ops.len() {
        if let Some((rows, input, output)) = candidate(graph, k, &uses, (&taken, &written)) {
            out.push((
                InPlaceOp {
                    input,
                    output,
                    temp: None,
                    rows: true,
                },
                rows,
            ));
        }
    }
    out
}

/// One slot of a piece: its root, offset from the piece's start, bytes, live ops.
#[derive(Clone, Copy, Debug)]
struct Member {
    root: usize,
    at: u64,
    size: u64,
    first: u32,
    last: u32,
}

impl Member {
    fn meets(&self, o: &Member, base: u64, obase: u64) -> bool {
        let (a, b) = (base + self.at, obase + o.at);
        self.first <= o.last && o.first <= self.last && a < b + o.size && b < a + self.size
    }
}

/// A join the pieces must keep: `output`'s slot starts `shift` bytes before `input`'s, and
/// the two share bytes at op `op` only.
#[derive(Clone, Copy, Debug)]
struct Join {
    input: usize,
    output: usize,
    op: u32,
    shift: u64,
}

/// The pieces: slot roots joined at fixed distances. `piece[root]` is the piece a root is
/// in; each piece lists its members.
#[derive(Clone)]
struct Pieces {
    piece: Vec<usize>,
    members: Vec<Vec<Member>>,
    joins: Vec<Join>,
}

impl Pieces {
    /// Joins `j` when the two slots are in different pieces and the joined piece holds no
    /// two members that share bytes while both are live, but for the joins' own pairs at
    /// their op. False, leaving the pieces as they were, otherwise.
    fn join(&mut self, j: Join) -> bool {
        let (pi, po) = (self.piece[j.input], self.piece[j.output]);
        if pi == po {
            return false;
        }
        let at = |p: usize, r: usize| self.members[p].iter().find(|m| m.root == r).map(|m| m.at);
        let (Some(ai), Some(ao)) = (at(pi, j.input), at(po, j.output)) else {
            return false;
        };
        // The output's piece moves so that the output starts `shift` before the input.
        let delta = i128::from(ai) - i128::from(j.shift) - i128::from(ao);
        let mut joined: Vec<(i128, Member)> = self.members[pi]
            .iter()
            .map(|m| (i128::from(m.at), *m))
            .chain(self.members[po].iter().map(|m| (i128::from(m.at) + delta, *m)))
            .collect();
        let low = joined.iter().map(|(a, _)| *a).min().unwrap_or(0);
        for (a, m) in &mut joined {
            m.at = u64::try_from(*a - low).unwrap_or(u64::MAX);
        }
        let joined: Vec<Member> = joined.into_iter().map(|(_, m)| m).collect();
        let mut joins = self.joins.clone();
        joins.push(j);
        let allowed = |a: &Member, b: &Member| {
            joins.iter().any(|j| {
                let pair = (j.input == a.root && j.output == b.root)
                    || (j.input == b.root && j.output == a.root);
                pair && a.first.max(b.first) == j.op && a.last.min(b.last) == j.op
            })
        };
        for (x, a) in joined.iter().enumerate() {
            for b in &joined[x + 1..] {
                if a.meets(b, 0, 0) && !allowed(a, b) {
                    return false;
                }
            }
        }
        self.members[pi] = joined;
        self.members[po].clear();
        for p in &mut self.piece {
            if *p == po {
                *p = pi;
            }
        }
        self.joins = joins;
        true
    }
}

/// The most bytes live at one op, a pair joined at its op counted once where its slots
/// overlap: no placement of these slots with these joins is lower.
fn live_bound(pieces: &Pieces, last: u32) -> u64 {
    let mut live = vec![0i128; last as usize + 2];
    for m in pieces.members.iter().flatten() {
        let end = (m.last as usize).min(last as usize) + 1;
        live[m.first as usize] += i128::from(m.size);
        live[end] -= i128::from(m.size);
    }
    let size = |r: usize| {
        pieces.members[pieces.piece[r]]
            .iter()
            .find(|m| m.root == r)
            .map_or(0, |m| i128::from(m.size))
    };
    for j in &pieces.joins {
        let (x, y) = (size(j.input), size(j.output));
        let union = y.max(i128::from(j.shift) + x);
        let k = j.op as usize;
        live[k] -= x + y - union;
        live[k + 1] += x + y - union;
    }
    let mut now = 0i128;
    let mut most = 0i128;
    for d in live {
        now += d;
        most = most.max(now);
    }
    u64::try_from(most).unwrap_or(0)
}

/// Places the pieces first fit, in `order` (indices of non-empty pieces): each at the
/// lowest offset (a multiple of `align`) where none of its members shares a byte with a
/// member placed before while both are live. The offset of each piece and the height.
fn first_fit(members: &[Vec<Member>], order: &[usize], align: u64) -> (Vec<u64>, u64) {
    let mut base = vec![0u64; members.len()];
    let mut placed: Vec<(u64, Member)> = Vec::new();
    let mut height = 0u64;
    for &p in order {
        let mine = &members[p];
        let mut offsets: Vec<u64> = vec![0];
        for (b, o) in &placed {
            for m in mine {
                if m.first <= o.last && o.first <= m.last {
                    let end = b + o.at + o.size;
                    offsets.push(end.saturating_sub(m.at).div_ceil(align) * align);
                }
            }
        }
        offsets.sort_unstable();
        offsets.dedup();
        let fits = |at: u64| {
            !mine
                .iter()
                .any(|m| placed.iter().any(|(b, o)| m.meets(o, at, *b)))
        };
        let at = offsets.into_iter().find(|&at| fits(at)).unwrap_or(height);
        base[p] = at;
        for m in mine {
            placed.push((at, *m));
            height = height.max(at + m.at + m.size);
        }
    }
    (base, height)
}

/// The search for joins: the candidates as joins, the pieces before any (every slot alone,
/// split in-place pairs joined), and what packing needs.
struct Search {
    /// Per candidate, its join and pair; `None` when it cannot run with row overlap here.
    joins: Vec<Option<(Join, InPlaceOp)>>,
    /// The pieces without any candidate's join.
    start: Pieces,
    /// Candidates in the order they are tried: at the busiest ops first.
    order: Vec<usize>,
    /// The bank's slot alignment, and its last op.
    align: u64,
    last: u32,
}

impl Search {
    /// The search over `found` in the scratch bank `memory` of `inp`; `None` when a split
    /// in-place pair does not join.
    fn new(inp: &Inputs<'_>, found: &[(InPlaceOp, Rows)], memory: &str) -> Option<Search> {
        let g = inp.graph;
        let roots: Vec<usize> = inp.roots_of(ArenaRole::Scratch).map(|(i, _)| i).collect();
        let align = roots
            .iter()
            .map(|&i| inp.slot_align(i, memory))
            .max()
            .unwrap_or(1)
            .max(1);
        let n = g.tensors.len();
        let mut start = Pieces {
            piece: (0..n).collect(),
            members: vec![Vec::new(); n],
            joins: Vec::new(),
        };
        let last = inp.last_op();
        let slot = |t: TensorIndex| inp.lifetimes.slot_of[t.get()].get();
        for &i in &roots {
            let (first, end) = inp.lifetimes.live[i].unwrap_or((0, last));
            start.members[i].push(Member {
                root: i,
                at: 0,
                size: inp.slot_size[i],
                first,
                last: end,
            });
        }
        // A candidate's output and a split in-place pair's (both packed from the op after
        // theirs) are live from their op in the pieces, joined or not.
        let outputs = found.iter().map(|(p, _)| p.output);
        for t in outputs.chain(inp.lifetimes.split.iter().map(|&(_, o)| o)) {
            let ro = slot(t);
            if let (Some(k), Some(m)) = (g.producer(t), start.members[ro].first_mut()) {
                m.first = m.first.min(k as u32);
            }
        }
        // A split in-place pair is put at one offset by the pipeline: a join at distance 0.
        for &(input, output) in &inp.lifetimes.split {
            let k = g.producer(output)? as u32;
            let join = Join {
                input: slot(input),
                output: slot(output),
                op: k,
                shift: 0,
            };
            start.join(join).then_some(())?;
        }
        let joins = found
            .iter()
            .map(|(p, rows)| {
                let elem = g.tensor(p.output).dtype.bytes_for(1).unwrap_or(1);
                let shift = (rows.min_shift() as u64 * elem).div_ceil(align) * align;
                let join = Join {
                    input: slot(p.input),
                    output: slot(p.output),
                    op: g.producer(p.output)? as u32,
                    shift,
                };
                (shift < g.tensor(p.output).size).then_some((join, *p))
            })
            .collect();
        let mut live = vec![0u64; last as usize + 2];
        for m in start.members.iter().flatten() {
            for x in &mut live[m.first as usize..=(m.last as usize).min(last as usize)] {
                *x += m.size;
            }
        }
        let mut order: Vec<(u64, usize)> = found
            .iter()
            .enumerate()
            .filter_map(|(c, (p, _))| Some((live[g.producer(p.output)?], c)))
            .collect();
        order.sort_by_key(|&(bytes, c)| (u64::MAX - bytes, c));
        Some(Search {
            joins,
            start,
            order: order.into_iter().map(|(_, c)| c).collect(),
            align,
            last,
        })
    }

    /// First fit in four orders (largest first, ties early or late; earliest or latest
    /// first), the lowest height kept: first fit puts a piece as low as it goes, which can
    /// leave the next piece of a chain no room below.
    fn pack(&self, pieces: &Pieces) -> (Vec<u64>, u64) {
        let n = pieces.members.len();
        let live: Vec<usize> = (0..n).filter(|&p| !pieces.members[p].is_empty()).collect();
        let first = |p: usize| pieces.members[p].iter().map(|m| m.first).min().unwrap_or(0);
        let extent = |p: usize| {
            let m = &pieces.members[p];
            m.iter().map(|m| m.at + m.size).max().unwrap_or(0)
        };
        let keys: [&dyn Fn(usize) -> (u64, u64); 4] = [
            &|p| (u64::MAX - extent(p), u64::from(first(p))),
            &|p| (u64::MAX - extent(p), u64::MAX - u64::from(first(p))),
            &|p| (u64::from(first(p)), u64::MAX - extent(p)),
            &|p| (u64::MAX - u64::from(first(p)), u64::MAX - extent(p)),
        ];
        keys.iter()
            .map(|key| {
                let mut o = live.clone();
                o.sort_by_key(|&p| (key(p), p));
                first_fit(&pieces.members, &o, self.align)
            })
            .min_by_key(|(_, height)| *height)
            .unwrap_or_default()
    }

    /// The pieces with the joins of candidates `chosen`, in order; `None` if one fails.
    fn build(&self, chosen: &[usize]) -> Option<Pieces> {
        let mut tried = self.start.clone();
        for &c in chosen {
            let (join, _) = self.joins[c]?;
            tried.join(join).then_some(())?;
        }
        Some(tried)
    }

    /// The joins to keep, their pieces and packing. A join that leaves the height as it is
    /// is kept too (the next one may need it: a chain lowers the peak only once each of its
    /// ops overlaps), then each kept join that the height does not need is dropped again.
    fn choose(&self) -> (Vec<usize>, Pieces, (Vec<u64>, u64)) {
        let mut pieces = self.start.clone();
        let mut best = self.pack(&pieces);
        let mut chosen: Vec<usize> = Vec::new();
        for &c in self.order.iter().take(MAX_TRIES) {
            let Some((join, _)) = self.joins[c] else {
                continue;
            };
            let mut tried = pieces.clone();
            if !tried.join(join) {
                continue;
            }
            let packed = self.pack(&tried);
            if packed.1 <= best.1 {
                (pieces, best) = (tried, packed);
                chosen.push(c);
            }
        }
        let mut at = chosen.len();
        while at > 0 {
            at -= 1;
            let mut fewer = chosen.clone();
            fewer.remove(at);
            if let Some(tried) = self.build(&fewer) {
                let packed = self.pack(&tried);
                if packed.1 <= best.1 {
                    (pieces, best, chosen) = (tried, packed, fewer);
                }
            }
        }
        (chosen, pieces, best)
    }
}

/// `planned` (the plan of `graph` without row overlap), or the plan with row overlap when
/// its scratch peak is lower: see the module docs. Only a model whose scratch is one arena
/// of at most [`MAX_SLOTS`] slots is tried. The plan with row overlap passes the verifier
/// before it is kept; when it cannot be made (the fixed offsets over a budget) or fails the
/// verifier, `planned` is kept with a warning saying why.
pub(super) fn improve(manifest: &Manifest, graph: &Graph, mut planned: Planned) -> Result<Planned> {
    let why = match with_rows(manifest, graph, &planned) {
        Ok(None) => return Ok(planned),
        Ok(Some(p)) => {
            let rules = crate::verify::VerifyRules::from_manifest(manifest);
            match crate::verify::verify_with(&p.graph, &p.plan, &rules) {
                Ok(()) => return Ok(p),
                Err(v) => {
                    let list: Vec<String> = v.iter().map(|v| v.to_string()).collect();
                    format!(
                        "its plan failed the verifier ({}); please report it with the manifest and model",
                        list.join("; ")
                    )
                }
            }
        }
        Err(e) => e.message().to_string(),
    };
    planned.warnings.push(format!(
        "memory.row_overlap: planned without row overlap, because {why}"
    ));
    Ok(planned)
}

/// The plan with row overlap when its scratch peak is below `planned`'s; `None` otherwise.
fn with_rows(manifest: &Manifest, graph: &Graph, planned: &Planned) -> Result<Option<Planned>> {
    let found = candidates(graph);
    let scratch: Vec<&str> = planned
        .plan
        .arena_usages
        .values()
        .filter(|a| a.role == ArenaRole::Scratch)
        .map(|a| a.memory.as_str())
        .collect();
    let ([memory], false) = (scratch.as_slice(), found.is_empty()) else {
        return Ok(None);
    };
    let mut g = graph.clone();
    g.in_place.extend(found.iter().map(|(p, _)| *p));
    let lifetimes = lifetimes::compute(&g)?;
    let none = BTreeMap::new();
    let (inp, _) = Inputs::new(manifest, &g, &lifetimes, &none)?;
    if inp.roots_of(ArenaRole::Scratch).count() > MAX_SLOTS {
        return Ok(None);
    }
    let Some(search) = Search::new(&inp, &found, memory) else {
        return Ok(None);
    };
    drop(inp);
    let (chosen, pieces, (base, height)) = search.choose();
    let kept: Vec<InPlaceOp> = chosen
        .iter()
        .filter_map(|&c| Some(search.joins[c]?.1))
        .collect();
    if kept.is_empty() || height >= scratch_bytes(planned) {
        return Ok(None);
    }
    // Only the joins kept: the pairs that did not join run as before.
    let mut g = graph.clone();
    g.in_place.extend(kept);
    let lifetimes = lifetimes::compute(&g)?;
    let mut fixed = BTreeMap::new();
    for (p, members) in pieces.members.iter().enumerate() {
        for m in members {
            fixed.insert(TensorIndex(m.root as u32), base[p] + m.at);
        }
    }
    let bound = live_bound(&pieces, search.last);
    match plan_with(manifest, Cow::Owned(g), &lifetimes, &fixed)? {
        Ok(mut p) if scratch_bytes(&p) < scratch_bytes(planned) => {
            // The bank's bound is the joined pieces' (the packers saw fixed slots only).
            if let [r] = p.scratch_reports.as_mut_slice() {
                r.lower_bound = bound.min(r.used);
                r.fragmentation = r.used - r.lower_bound;
                r.optimal = r.used == r.lower_bound;
            }
            Ok(Some(Planned {
                classic_bound: planned.classic_bound,
                ..p
            }))
        }
        _ => Ok(None),
    }
}
