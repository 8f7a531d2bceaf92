//! Lifetimes: the ops over which each tensor's bytes must stay intact.
//!
//! A tensor lives from the first op that touches it to the last; model inputs from op 0,
//! model outputs to the last op; constants and variables for the whole run. Aliases (a
//! reshape's output is its input's bytes) share one slot, so their lifetimes merge. Two
//! tensors may share bytes only when one ends strictly before the other starts.

use std::collections::{BTreeMap, BTreeSet};
use std::vec::Vec;

use crate::error::{Error, Result};
use crate::graph::{Graph, TensorIndex, TensorKind};

/// Lifetimes of every tensor of a graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifetimes {
    /// Number of ops in the schedule (at least 1, so a graph without ops has op 0).
    pub ops: u32,
    /// Per tensor: `(start_op, end_op)` inclusive, or `None` when nothing uses it.
    pub live: Vec<Option<(u32, u32)>>,
    /// Per tensor: the tensor whose slot it uses (itself unless it is an alias or runs in
    /// place).
    pub slot_of: Vec<TensorIndex>,
    /// Tensors of in-place pairs ([`Graph::in_place`]): their own lifetime, while `live`
    /// holds their slot's (the union over the chain). The plan lists these.
    pub own: BTreeMap<TensorIndex, (u32, u32)>,
    /// In-place pairs `(input, output)` whose output is smaller than its input, kept in
    /// slots of their own while packing: the output's slot lives from the op after the
    /// in-place op (at that op its bytes are inside the input's), and the pipeline then puts
    /// both slots at one offset (or plans again with the pair merged).
    pub split: Vec<(TensorIndex, TensorIndex)>,
}

impl Lifetimes {
    /// Lifetimes given directly (a CSV problem): every tensor its own slot.
    pub fn explicit(live: Vec<Option<(u32, u32)>>) -> Lifetimes {
        let ops = live
            .iter()
            .flatten()
            .map(|&(_, e)| e.saturating_add(1))
            .max()
            .unwrap_or(1)
            .max(1);
        let slot_of = (0..live.len()).map(|i| TensorIndex(i as u32)).collect();
        Lifetimes {
            ops,
            live,
            slot_of,
            own: BTreeMap::new(),
            split: Vec::new(),
        }
    }

    /// True when `t` shares another tensor's slot.
    pub fn is_alias(&self, t: TensorIndex) -> bool {
        self.slot_of[t.get()] != t
    }
}

/// Computes every tensor's lifetime from the op order.
pub fn compute(graph: &Graph) -> Result<Lifetimes> {
    compute_merging(graph, &BTreeSet::new())
}

/// [`compute`], with the in-place pairs whose output is in `merged` in one slot even when
/// the output is smaller than the input (see [`Lifetimes::split`]).
pub fn compute_merging(graph: &Graph, merged: &BTreeSet<TensorIndex>) -> Result<Lifetimes> {
    let n = graph.tensors.len();
    let ops = u32::try_from(graph.ops.len())
        .map_err(|_| Error::model(format!("model `{}` has more than 2^32 ops", graph.name)))?;
    let last = ops.saturating_sub(1);
    let mut live: Vec<Option<(u32, u32)>> = vec![None; n];
    let touch = |live: &mut Vec<Option<(u32, u32)>>, t: TensorIndex, op: u32| {
        let slot = &mut live[t.get()];
        *slot = Some(match *slot {
            None => (op, op),
            Some((s, e)) => (s.min(op), e.max(op)),
        });
    };
    for (k, op) in graph.ops.iter().enumerate() {
        for t in op.tensors() {
            touch(&mut live, t, k as u32);
        }
    }
    for io in &graph.inputs {
        touch(&mut live, io.tensor, 0);
    }
    for io in &graph.outputs {
        touch(&mut live, io.tensor, last);
    }
    for (t, op) in crate::patch::pinned(graph) {
        touch(&mut live, t, op);
    }
    for (i, t) in graph.tensors.iter().enumerate() {
        if t.kind != TensorKind::Activation {
            live[i] = Some((0, last));
        }
    }
    // Control flow: a condition lives to where it is read, and loops hold what they carry.
    for c in &graph.control {
        if let Some(at) = c.read_before() {
            touch(&mut live, TensorIndex(c.tensor()), at.saturating_sub(1).min(last));
        }
    }
    over_loops(graph, &mut live, true);
    // In-place pairs keep their own lifetimes for the plan; their slot merges like an alias.
    let mut own = BTreeMap::new();
    for p in &graph.in_place {
        for t in [p.input, p.output] {
            if let Some(l) = live.get(t.get()).copied().flatten() {
                own.insert(t, l);
            }
        }
    }
    // Aliases: one slot per group, the group's lifetime the union of its members'.
    let mut slot_of: Vec<TensorIndex> = (0..n).map(|i| TensorIndex(i as u32)).collect();
    fn root(slot_of: &[TensorIndex], t: TensorIndex) -> TensorIndex {
        let r = crate::graph::alias_root(t.get(), slot_of.len(), |i| Some(slot_of[i].get()));
        TensorIndex(r as u32)
    }
    // A smaller output keeps its own slot from the op after, unless asked to merge or it is
    // read by nothing after the op.
    let slot = |t: TensorIndex| graph.tensors[t.get()].size.div_ceil(16);
    let mut split = Vec::new();
    for p in graph.in_place.iter().filter(|p| !p.rows) {
        if let (Some((k, end)), Some(_)) = (live[p.output.get()], live[p.input.get()])
            && slot(p.output) < slot(p.input)
            && end > k
            && !merged.contains(&p.output)
        {
            live[p.output.get()] = Some((k + 1, end));
            split.push((p.input, p.output));
        }
    }
    // Row overlap: the two keep slots of their own, the output's packed from the op after
    // (at the op its bytes are the shared buffer's, which the pipeline's row placement
    // keeps free: `pipeline::rows`).
    for p in graph.in_place.iter().filter(|p| p.rows) {
        if let Some((k, end)) = live[p.output.get()]
            && end > k
        {
            live[p.output.get()] = Some((k + 1, end));
        }
    }
    let pairs = graph
        .in_place
        .iter()
        .filter(|p| !p.rows && !split.contains(&(p.input, p.output)))
        .map(|p| (p.output, p.input));
    for (alias, target) in graph.aliases.iter().copied().chain(pairs) {
        let (ra, rt) = (root(&slot_of, alias), root(&slot_of, target));
        if ra == rt {
            continue;
        }
        let (a, b) = (&graph.tensors[ra.get()], &graph.tensors[rt.get()]);
        if a.kind != b.kind {
            return Err(Error::model(format!(
                "tensor `{}` aliases `{}`, but one is {:?} and the other {:?}; only tensors of one kind can share bytes",
                a.id, b.id, a.kind, b.kind
            )));
        }
        slot_of[ra.get()] = rt;
    }
    for i in 0..n {
        let r = root(&slot_of, TensorIndex(i as u32));
        slot_of[i] = r;
    }
    for i in 0..n {
        let r = slot_of[i].get();
        if r != i
            && let Some((s, e)) = live[i]
        {
            live[r] = Some(match live[r] {
                None => (s, e),
                Some((rs, re)) => (rs.min(s), re.max(e)),
            });
        }
    }
    for i in 0..n {
        let r = slot_of[i].get();
        if r != i && live[i].is_some() {
            live[i] = live[r];
        }
    }
    over_loops(graph, &mut live, false);
    Ok(Lifetimes {
        ops: ops.max(1),
        live,
        slot_of,
        own,
        split,
    })
}

/// Widens lifetimes for the graph's loops ([`Graph::control`]): a tensor that lives into or
/// out of a loop's ops lives over all of them (the ops run again, and the next pass must
/// not find its bytes reused), and so does one, within a loop, whose first op in the loop
/// reads it before any op of the loop writes it (its value comes from the pass before; with
/// `read_first`). Inner loops first, until nothing changes.
fn over_loops(graph: &Graph, live: &mut [Option<(u32, u32)>], read_first: bool) {
    let mut loops: Vec<_> = graph
        .control
        .iter()
        .filter(|c| c.is_loop() && !c.span().is_empty())
        .map(|c| c.span())
        .collect();
    if loops.is_empty() {
        return;
    }
    loops.sort_by_key(|s| s.end - s.start);
    let reads_first = |t: usize, span: crate::graph::OpRange| {
        let t = TensorIndex(t as u32);
        (span.start..span.end)
            .filter_map(|k| graph.ops.get(k as usize))
            .find(|op| op.tensors().any(|x| x == t))
            .is_some_and(|op| !op.outputs.contains(&t) && !op.scratch.contains(&t))
    };
    let mut changed = true;
    while changed {
        changed = false;
        for span in &loops {
            let last = span.end - 1;
            for (t, l) in live.iter_mut().enumerate() {
                let Some((s, e)) = *l else { continue };
                let inside = span.start <= s && e <= last;
                let apart = e < span.start || s > last;
                let spans = s <= span.start && last <= e;
                let widen = if inside {
                    read_first && reads_first(t, *span)
                } else {
                    !apart && !spans
                };
                if widen && (s > span.start || e < last) {
                    *l = Some((s.min(span.start), e.max(last)));
                    changed = true;
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::graph::{DType, IoName, Op, Tensor};
    use std::string::ToString;

    /// The graph `name` of `tensors` and `ops` with model `inputs` and `outputs` and nothing
    /// else (no aliases, in-place pairs or patches): for the tests of the stages after import.
    pub(crate) fn graph_of(
        name: &str,
        tensors: Vec<Tensor>,
        ops: Vec<Op>,
        inputs: Vec<IoName>,
        outputs: Vec<IoName>,
    ) -> Graph {
        Graph {
            name: name.into(),
            tensors,
            ops,
            inputs,
            outputs,
            aliases: vec![],
            warnings: vec![],
            in_place: vec![],
            folded_pads: vec![],
            patches: None,
            ..Graph::default()
        }
    }

    /// Op `opcode` reading the tensors `inputs` (`None`: an optional input left out) and
    /// writing `outputs`, without scratch or options.
    pub(crate) fn op(opcode: &str, inputs: &[Option<u32>], outputs: &[u32]) -> Op {
        Op {
            opcode: opcode.into(),
            inputs: inputs.iter().map(|i| i.map(TensorIndex)).collect(),
            outputs: outputs.iter().map(|&i| TensorIndex(i)).collect(),
            scratch: vec![],
            options: Default::default(),
        }
    }

    /// The model input or output `name`, tensor #`tensor`.
    pub(crate) fn io(name: &str, tensor: u32) -> IoName {
        IoName {
            name: name.into(),
            tensor: TensorIndex(tensor),
        }
    }

    fn t(id: &str, kind: TensorKind) -> Tensor {
        Tensor {
            id: id.to_string(),
            name: id.to_string(),
            dtype: DType::I8,
            shape: vec![4],
            size: 4,
            kind,
            quantization: None,
            align_hint: None,
            data: None,
        }
    }

    fn graph() -> Graph {
        use TensorKind::*;
        graph_of(
            "g",
            vec![
                t("in", Activation),
                t("w", Constant),
                t("a", Activation),
                t("b", Activation),
                t("out", Activation),
                t("unused", Activation),
                t("state", Variable),
            ],
            vec![
                op("A", &[Some(0), Some(1)], &[2]),
                op("B", &[Some(2), None], &[3]),
                op("C", &[Some(3)], &[4]),
                op("D", &[Some(0)], &[]),
            ],
            vec![io("in", 0)],
            vec![io("out", 4)],
        )
    }

    #[test]
    fn rules() {
        let l = compute(&graph()).unwrap();
        assert_eq!(l.ops, 4);
        assert_eq!(l.live[0], Some((0, 3)));
        assert_eq!(l.live[1], Some((0, 3)));
        assert_eq!(l.live[2], Some((0, 1)));
        assert_eq!(l.live[3], Some((1, 2)));
        assert_eq!(l.live[4], Some((2, 3)), "outputs live to the last op");
        assert_eq!(l.live[5], None);
        assert_eq!(l.live[6], Some((0, 3)));
    }

    #[test]
    fn aliases_merge() {
        let mut g = graph();
        g.aliases.push((TensorIndex(3), TensorIndex(2)));
        let l = compute(&g).unwrap();
        assert_eq!(l.slot_of[3], TensorIndex(2));
        assert!(l.is_alias(TensorIndex(3)));
        assert_eq!(l.live[2], Some((0, 2)));
        assert_eq!(l.live[3], Some((0, 2)));
        g.aliases.push((TensorIndex(1), TensorIndex(2)));
        assert!(compute(&g).is_err());
    }
}
