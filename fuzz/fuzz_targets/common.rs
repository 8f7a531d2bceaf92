//! What every target checks on an accepted plan: the independent verifier passes, the plan
//! file round-trips, and the plan table `include_model!` would build passes the `const`
//! checker (`planner::rt::check::check`), run here at run time: an accepted plan that the
//! macro's check refuses aborts the run.
//!
//! The table is built as `planner-macros/src/codegen/table.rs` builds it (slots sorted by
//! arena, offset and index; roots through `alias_of`; element sizes of the view types).

#![allow(dead_code)]

use std::collections::BTreeSet;

use planner::graph::DType;
use planner::manifest::Manifest;
use planner::planfile::{BuildPlanFile, Layout, PlanFile};
use planner::rt::check::{self, PlanTable};
use planner::verify::{self, VerifyRules};
use planner::{Error, Planned};

#[path = "../../planner-macros/src/props/table.rs"]
mod table;

use table::{Analysis, OpLists};

/// An error the planner may return for bad or infeasible input; an internal error is a bug.
pub fn expected(e: &Error) {
    // The prefix, not a substring: inputs may echo any text (a CSV id, a tensor name) into
    // an ordinary error message.
    assert!(
        !e.message().starts_with("internal planner error"),
        "internal error: {e}"
    );
}

/// Checks an accepted plan as the build helper and the macro would use it.
pub fn accepted(manifest: &Manifest, planned: &Planned) {
    let rules = VerifyRules::from_manifest(manifest);
    if let Err(v) = verify::verify_with(&planned.graph, &planned.plan, &rules) {
        panic!("accepted plan fails verification: {v:?}");
    }
    let layout = Layout::of(manifest);
    let file = match PlanFile::from_plan(&planned.graph, &planned.plan, &layout) {
        Ok(f) => f,
        Err(e) => panic!("accepted plan has no plan file: {e}"),
    };
    plan_file(&file, true);
}

/// Round-trips `file` through its text; with `must_pass`, runs the `const` checker on its
/// table (a plan file from the planner must pass it).
pub fn plan_file(file: &PlanFile, must_pass: bool) {
    let text = file.to_bytes();
    let text = std::str::from_utf8(&text).expect("plan file is UTF-8");
    let back = PlanFile::parse(text, "round-trip").expect("plan file parses back");
    assert_eq!(&back, file, "plan file round trip");
    if must_pass {
        with_table(file, |t| {
            check::check(t, &mut vec![0; check::scratch_len(t.slots.len())])
        });
    }
}

/// Builds the table the macro would and calls `f` with it; `None` when the file has indices
/// out of range (the macro's load refuses those before any table).
pub fn with_table<R>(f: &PlanFile, run: impl FnOnce(&PlanTable<'_>) -> R) -> Option<R> {
    let nt = f.tensors.len();
    if f.tensors.iter().any(|t| t.arena as usize >= f.arenas.len())
        || f.tensors
            .iter()
            .any(|t| t.alias_of.is_some_and(|a| a as usize >= nt))
    {
        return None;
    }
    let mut order: Vec<usize> = (0..nt).collect();
    order.sort_by_key(|&i| (f.tensors[i].arena, f.tensors[i].offset, i));
    let mut slot = vec![0usize; nt];
    for (pos, &i) in order.iter().enumerate() {
        slot[i] = pos;
    }
    let root = |i: usize| {
        let mut r = i;
        for _ in 0..nt {
            match f.tensors[r].alias_of {
                Some(next) if next as usize != r => r = next as usize,
                _ => break,
            }
        }
        r
    };
    let mut elements = Vec::with_capacity(nt);
    for e in &f.tensors {
        elements.push(match e.dtype {
            DType::I4 | DType::String | DType::Resource | DType::Variant => e.size,
            _ => e.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))?,
        });
    }
    let roots: Vec<usize> = (0..nt).map(root).collect();
    let mut lists: Vec<OpLists> = Vec::new();
    for op in &f.ops {
        let all = op
            .inputs
            .iter()
            .flatten()
            .chain(&op.outputs)
            .chain(&op.scratch);
        if all.clone().any(|&t| t as usize >= nt) {
            return None;
        }
        let mut written = BTreeSet::new();
        let mut writes = Vec::new();
        for &t in op.outputs.iter().chain(&op.scratch) {
            if written.insert(root(t as usize)) {
                writes.push(slot[t as usize] as u32);
            }
        }
        let reads = op
            .inputs
            .iter()
            .flatten()
            .filter(|&&t| !written.contains(&root(t as usize)))
            .map(|&t| slot[t as usize] as u32)
            .collect();
        // An in-place op: its declared input and output, by slot, as the generated table
        // gives them (a declaration out of range is the macro's error, not the check's).
        let in_place = match op.in_place {
            Some(d) => {
                let input = op.inputs.get(d.input as usize).copied().flatten()?;
                let output = *op.outputs.get(d.output as usize)?;
                Some(check::InPlaceRow {
                    input: slot[input as usize] as u32,
                    output: slot[output as usize] as u32,
                    rows: None,
                })
            }
            None => None,
        };
        lists.push((reads, writes, in_place));
    }
    let analysis = Analysis {
        order: &order,
        slot: &slot,
        roots: &roots,
        elements: &elements,
        ops: &lists,
    };
    table::with_table(f, &analysis, run)
}

/// Imports and plans a parsed manifest; its planner, when it takes options, is replaced by
/// the default (whose searches are bounded), so a run is not as long as a manifest asks.
pub fn plan(mut manifest: Manifest) {
    use planner::pack::PlannerKind;
    if !matches!(
        manifest.planner,
        PlannerKind::Greedy | PlannerKind::GreedyBySize | PlannerKind::BestOfGreedy
    ) {
        manifest.planner = PlannerKind::default();
    }
    let graph = match planner::import::load(&manifest) {
        Ok(g) => g,
        Err(e) => return expected(&e),
    };
    match planner::plan_graph(&manifest, &graph) {
        Ok(planned) => accepted(&manifest, &planned),
        Err(e) => expected(&e),
    }
}
