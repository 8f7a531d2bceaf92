//! The analysis between loading a plan and generating code (parse -> load -> analyze ->
//! codegen): what several codegen files need about the model's tensors and ops, computed
//! once from the checked plan. Codegen files read it from [`Ctx`](crate::codegen::Ctx); none
//! of them computes it again or asks another codegen file for it.

use std::collections::BTreeSet;
use std::str::FromStr;

use planner_planfile::TensorKind;
use planner_planfile::naming;
use proc_macro2::{Ident, Span, TokenStream};

use crate::load::Loaded;

/// View fields: (field name, tensor index).
pub(crate) type Fields = Vec<(String, usize)>;

/// What the codegen needs about a model.
pub(crate) struct Analysis {
    /// Tensor indices in slot order: sorted by (arena, offset, index), as the checker
    /// wants them.
    pub(crate) order: Vec<usize>,
    /// Slot position of each tensor.
    pub(crate) slot: Vec<usize>,
    /// Unique identifier of each tensor.
    pub(crate) idents: Vec<String>,
    /// Each op's facts, in plan order.
    pub(crate) ops: Vec<OpFacts>,
}

/// What the codegen needs about one op.
pub(crate) struct OpFacts {
    /// The tensors its view reads (see [`op_tensors`]).
    pub(crate) reads: Fields,
    /// The tensors its view writes: outputs, scratch, variable inputs.
    pub(crate) writes: Fields,
    /// Its in-place declaration as tensors; `None` for an op that runs out of place.
    pub(crate) in_place: Option<InPlace>,
    /// Its kind and typed options; `None` for an op without typed options.
    pub(crate) kind: Option<OpKind>,
    /// The in-place kernel trait and method, when it runs in place (`load` checked that its
    /// kind has them).
    pub(crate) in_place_kind: Option<(Ident, Ident)>,
}

/// An op that runs in place, as tensors.
#[derive(Clone, Copy)]
pub(crate) struct InPlace {
    /// Position of the taken-over input in the op's inputs.
    pub(crate) input_pos: usize,
    /// The taken-over input.
    pub(crate) input: usize,
    /// Position of the output in the op's outputs.
    pub(crate) output_pos: usize,
    /// The output written over it.
    pub(crate) output: usize,
    /// With row overlap: how its output rows read its input rows (`load` checked it).
    pub(crate) rows: Option<planner_rt::rows::Rows>,
}

/// The typed options of one op: the kind (the `OpOptions` variant and the kernel trait's
/// name), the kernel trait's method, the options type's name in `rt::options`, and the
/// options value as tokens.
pub(crate) struct OpKind {
    pub(crate) kind: Ident,
    pub(crate) method: Ident,
    pub(crate) ty: Ident,
    pub(crate) value: TokenStream,
}

/// Analyses `l`; `rt` is the path generated code reaches the runtime by (`::planner::rt`),
/// which the options values are written with.
pub(crate) fn analyze(l: &Loaded, rt: &str) -> Analysis {
    let tensors = &l.file.tensors;
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    order.sort_by_key(|&i| (tensors[i].arena, tensors[i].offset, i));
    let mut slot = vec![0; tensors.len()];
    for (pos, &i) in order.iter().enumerate() {
        slot[i] = pos;
    }
    let ops = (0..l.file.ops.len())
        .map(|k| {
            let in_place = in_place(l, k);
            let (reads, writes) = op_tensors(l, k, in_place);
            // An op with row overlap runs its kind's usual kernel, band by band.
            let in_place_kind = in_place
                .filter(|ip| ip.rows.is_none())
                .and_then(|_| l.file.ops[k].options.in_place_codegen())
                .map(|(kind, method)| (ident(kind), ident(method)));
            OpFacts {
                reads,
                writes,
                in_place,
                kind: kind(l, k, rt),
                in_place_kind,
            }
        })
        .collect();
    Analysis {
        order,
        slot,
        idents: naming::unique_idents(tensors.iter().map(|t| t.name.as_str())),
        ops,
    }
}

fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

/// Op `k`'s in-place declaration as tensors; `load` checked the positions.
fn in_place(l: &Loaded, k: usize) -> Option<InPlace> {
    let op = &l.file.ops[k];
    let ip = op.in_place?;
    let input = (*op.inputs.get(ip.input as usize)?)? as usize;
    let output = *op.outputs.get(ip.output as usize)? as usize;
    let rows = if ip.rows {
        Some(planner_planfile::rows::op_rows(&l.file, op).ok()?)
    } else {
        None
    };
    Some(InPlace {
        input_pos: ip.input as usize,
        input,
        output_pos: ip.output as usize,
        output,
        rows,
    })
}

/// The kind and typed options of op `k`.
fn kind(l: &Loaded, k: usize, rt: &str) -> Option<OpKind> {
    let (kind, method, ty, value) = l.file.ops[k].options.codegen(rt)?;
    // The value is written by `planner` from its own types; it always parses.
    let value = TokenStream::from_str(&value.to_string()).unwrap_or_default();
    Some(OpKind {
        kind: ident(kind),
        method: ident(method),
        ty: ident(ty),
        value,
    })
}

/// The tensors op `k`'s view holds, with their field names: reads (inputs) and writes
/// (outputs, then scratch, then variable inputs, which the op updates). A tensor whose
/// bytes are another's (an alias, or the same tensor listed twice) is written once, and not
/// also read: the view never holds two references to the same bytes when one of them is
/// mutable. The input an in-place op's output takes over is not in the view either: its
/// bytes are at the start of that output.
fn op_tensors(l: &Loaded, k: usize, in_place: Option<InPlace>) -> (Fields, Fields) {
    let op = &l.file.ops[k];
    let taken = in_place.map(|ip| ip.input_pos);
    let root = |t: u32| l.roots[t as usize];
    let mut written = BTreeSet::new();
    let mut writes = Vec::new();
    let outs = named("output", op.outputs.iter().copied().map(Some));
    let scratch = named("scratch", op.scratch.iter().copied().map(Some));
    // Variable inputs (an LSTM's or SVDF's state) are state the op updates: mutable too;
    // a reshape-like op (a copy out of a resource variable) only reads its input.
    let copies = planner_rt::op_kinds::reshape(&op.opcode);
    let variables = named("input", op.inputs.iter().copied())
        .filter(|&(_, _, t)| !copies && l.file.tensors[t as usize].kind == TensorKind::Variable);
    for (_, name, t) in outs.chain(scratch).chain(variables) {
        if written.insert(root(t)) {
            writes.push((name, t as usize));
        }
    }
    let reads = named("input", op.inputs.iter().copied())
        .filter(|&(j, _, t)| Some(j) != taken && !written.contains(&root(t)))
        .map(|(_, name, t)| (name, t as usize))
        .collect();
    (reads, writes)
}

/// The tensors of an op's list `list` (`input`, `output`, `scratch`) that are present, with
/// their positions and view field names (`{list}{j}` for the `j`th).
fn named(
    list: &'static str,
    tensors: impl Iterator<Item = Option<u32>>,
) -> impl Iterator<Item = (usize, String, u32)> {
    tensors
        .enumerate()
        .filter_map(move |(j, t)| Some((j, format!("{list}{j}"), t?)))
}
