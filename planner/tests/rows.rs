//! `memory.row_overlap = true`: convolutions and pools write their output rows over the
//! input rows they have read. Pins the peaks of the bundled models with it (never above
//! the plan without it), checks that the plan file records each such op, and that the
//! verifier accepts the overlap only at the distance the op's rows allow.

mod common;

use std::path::Path;

use planner::manifest::Manifest;
use planner::planfile::{BuildPlanFile, Layout, PlanFile};
use planner::{Planned, verify};

use common::{assert_says, bundled_models, root};

fn plan(path: &Path, in_place: bool, rows: bool) -> Planned {
    let mut m = Manifest::for_model_file(path);
    m.aliasing.in_place = in_place;
    m.aliasing.row_overlap = rows;
    let g = planner::import::load(&m).unwrap();
    planner::plan_graph(&m, &g).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn scratch(p: &Planned) -> u64 {
    p.scratch_reports.iter().map(|r| r.used).sum()
}

fn person_detection() -> std::path::PathBuf {
    root().join("models/tflm_person_detect_int8.tflite")
}

/// Scratch bytes of every bundled model with row overlap, alone and beside in place: never
/// above the plan without it, and below it where a convolution's output is the peak.
#[test]
fn row_overlap_lowers_the_peaks_it_can_and_no_other() {
    let mut lower = 0;
    for path in bundled_models(&root()) {
        for in_place in [false, true] {
            let (without, with) = (plan(&path, in_place, false), plan(&path, in_place, true));
            let (a, b) = (scratch(&without), scratch(&with));
            assert!(
                b <= a,
                "{}: {b} with row overlap, {a} without",
                path.display()
            );
            let rows = with.graph.in_place.iter().filter(|p| p.rows).count();
            assert_eq!(
                rows > 0,
                b < a,
                "{}: {rows} ops with row overlap",
                path.display()
            );
            assert!(without.graph.in_place.iter().all(|p| !p.rows));
            lower += usize::from(b < a);
        }
    }
    assert!(lower >= 8, "only {lower} plans lower with row overlap");
    // Person detection: the first pointwise convolution's output (48x48x16) over its input
    // (48x48x8), and the stride-2 depthwise convolution's over that: 55,296 -> 37,632.
    let p = plan(&person_detection(), false, true);
    assert_eq!(scratch(&p), 37_632);
    let r = &p.scratch_reports[0];
    assert_eq!((r.lower_bound, r.optimal), (37_248, false));
}

/// The plan file marks each op with row overlap; its input starts after its output.
#[test]
fn the_plan_file_records_row_overlap() {
    let p = plan(&person_detection(), false, true);
    let file = PlanFile::from_plan(&p.graph, &p.plan, &Layout::default()).unwrap();
    let rows: Vec<_> = file
        .ops
        .iter()
        .filter_map(|o| Some((o, o.in_place.filter(|ip| ip.rows)?)))
        .collect();
    assert!(!rows.is_empty());
    for (op, ip) in rows {
        assert_eq!((ip.input, ip.output, ip.temp), (0, 0, None));
        let (x, y) = (
            &file.tensors[op.inputs[0].unwrap() as usize],
            &file.tensors[op.outputs[0] as usize],
        );
        let need = planner::planfile::rows::op_rows(&file, op)
            .unwrap()
            .min_shift() as u64;
        assert!(x.offset >= y.offset + need && x.offset <= y.offset + y.size);
    }
}

/// The verifier's messages for `plan` of `g`, one per line (it must refuse the plan).
fn refusals(g: &planner::graph::Graph, plan: &planner::plan::MemoryPlan) -> String {
    let v = verify::verify(g, plan).unwrap_err();
    v.iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The verifier's own rule: moving an input with row overlap nearer its output than its
/// rows allow, or declaring row overlap for an op without rows, is refused naming the pair.
#[test]
fn the_verifier_refuses_a_shift_the_rows_do_not_allow() {
    let p = plan(&person_detection(), false, true);
    assert!(verify::verify(&p.graph, &p.plan).is_ok());
    let pair = *p.graph.in_place.iter().find(|p| p.rows).unwrap();
    let id = p.graph.tensor(pair.input).id.clone();
    let mut bad = p.plan.clone();
    let alloc = bad.tensor_allocs.get_mut(&id).unwrap();
    alloc.offset -= 16;
    alloc.binding.as_mut().unwrap().offset -= 16;
    assert_says(
        &refusals(&p.graph, &bad),
        &[
            "with row overlap the input starts",
            "bytes after the output",
        ],
    );
    // The same pair declared on the model's last op (a reshape): no rows to overlap.
    let mut g = p.graph.clone();
    let last = g.ops.len() - 1;
    let (i, o) = (g.ops[last].inputs[0].unwrap(), g.ops[last].outputs[0]);
    g.in_place.push(planner::graph::InPlaceOp {
        input: i,
        output: o,
        temp: None,
        rows: true,
    });
    assert_says(
        &refusals(&g, &p.plan),
        &["does not slide a window down a [1, H, W, C] input"],
    );
}

/// Row overlap plans no patch stage and no model with control flow (both are left as they
/// are), and is off by default.
#[test]
fn row_overlap_is_off_by_default() {
    let m = Manifest::for_model_file(&person_detection());
    assert!(!m.aliasing.row_overlap);
}
