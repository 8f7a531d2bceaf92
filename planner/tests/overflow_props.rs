//! Sizes, offsets and alignments near 2^32, 2^63 and 2^64 never overflow: planning such
//! graphs and CSV problems ends in a plan that verifies, "does not fit" or an input error,
//! never a panic and never an internal error. `cargo test` builds this with overflow checks
//! on (the test profile inherits `dev`), as every `build.rs` runs; the first test proves it.

use std::fmt::Write as _;
use std::path::Path;

use planner::graph::{DType, Graph, IoName, Op, Tensor, TensorIndex, TensorKind};
use planner::manifest::Manifest;
use planner::pack::PlannerKind;
use planner::plan::MAX_ARENA;
use planner::verify::{VerifyRules, verify_with};
use proptest::prelude::*;

const EDGES: [u64; 14] = [
    0,
    1,
    (1 << 31) - 1,
    1 << 31,
    (1 << 32) - 1,
    1 << 32,
    (1 << 32) + 1,
    (1 << 63) - 1,
    1 << 63,
    (1 << 63) + 1,
    u64::MAX - 65_535,
    u64::MAX - 15,
    u64::MAX - 1,
    u64::MAX,
];

fn size() -> impl Strategy<Value = u64> {
    prop_oneof![
        1u64..5000,
        (0..EDGES.len()).prop_map(|i| EDGES[i]),
        (0..EDGES.len(), 0u64..64).prop_map(|(i, d)| EDGES[i].saturating_sub(d)),
    ]
}

#[test]
fn overflow_checks_are_on_in_this_build() {
    let x = std::hint::black_box(u64::MAX);
    let r = std::panic::catch_unwind(|| x + std::hint::black_box(1));
    assert!(
        r.is_err(),
        "u64::MAX + 1 did not panic: overflow checks are off"
    );
}

/// A manifest for the given banks (size, arena alignment exponent) and platform alignment.
fn manifest(banks: &[(u64, Option<u32>)], min_align: u32) -> Manifest {
    let mut s = String::from(
        "[model]\nname = \"m\"\ntensors = [ { id = \"unused\", dtype = \"u8\", shape = [1] } ]\n[platform]\nmemories = [\n",
    );
    for (k, (size, _)) in banks.iter().enumerate() {
        let size = if *size > i64::MAX as u64 {
            format!("\"{size:#x}\"")
        } else {
            size.to_string()
        };
        let _ = writeln!(
            s,
            "  {{ name = \"B{k}\", size = {size}, writable = true }},"
        );
    }
    s.push_str("  { name = \"ROM\", writable = false },\n]\n");
    let _ = writeln!(s, "min_alignment = {}", 1u64 << min_align);
    s.push_str("[memory]\nplanner = \"greedy_by_size\"\nconstraints = [\n");
    for (k, (_, align)) in banks.iter().enumerate() {
        match align {
            Some(a) => {
                let _ = writeln!(
                    s,
                    "  {{ name = \"B{k}\", arena_alignment = {} }},",
                    1u64 << a
                );
            }
            None => {
                let _ = writeln!(s, "  {{ name = \"B{k}\" }},");
            }
        }
    }
    s.push_str("]\n");
    Manifest::parse(&s, Path::new("overflow.toml")).expect("the test manifest parses")
}

fn graph(tensors: &[(u64, u8, Option<u32>)], ops: &[(usize, usize)]) -> Graph {
    let n = tensors.len();
    let tensors: Vec<Tensor> = tensors
        .iter()
        .enumerate()
        .map(|(i, &(size, kind, align))| Tensor {
            id: format!("t{i}"),
            name: format!("t{i}"),
            dtype: DType::U8,
            shape: vec![size],
            size,
            kind: [
                TensorKind::Activation,
                TensorKind::Constant,
                TensorKind::Variable,
            ][usize::from(kind % 3)],
            quantization: None,
            align_hint: align.map(|a| 1u64 << a),
            data: None,
        })
        .collect();
    let ops: Vec<Op> = ops
        .iter()
        .map(|&(i, o)| (i % n, o % n))
        .filter(|&(_, o)| tensors[o].kind != TensorKind::Constant)
        .map(|(i, o)| Op {
            opcode: "ADD".into(),
            inputs: vec![Some(TensorIndex(i as u32))],
            outputs: vec![TensorIndex(o as u32)],
            scratch: Vec::new(),
            options: Default::default(),
        })
        .collect();
    Graph {
        name: "m".into(),
        inputs: vec![IoName {
            name: "t0".into(),
            tensor: TensorIndex(0),
        }],
        tensors,
        ops,
        ..Graph::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn huge_graphs_plan_or_fail_cleanly(
        tensors in prop::collection::vec((size(), 0u8..3, prop::option::of(0u32..17)), 1..8),
        ops in prop::collection::vec((0usize..8, 0usize..8), 0..8),
        banks in prop::collection::vec((size(), prop::option::of(0u32..17)), 1..3),
        min_align in 0u32..17,
    ) {
        let m = manifest(&banks, min_align);
        let g = graph(&tensors, &ops);
        let too_big = g.tensors.iter().any(|t| t.size > MAX_ARENA);
        match planner::plan_graph(&m, &g) {
            Ok(p) => {
                prop_assert!(!too_big, "a tensor over {MAX_ARENA} bytes was planned");
                let rules = VerifyRules::from_manifest(&m);
                prop_assert!(verify_with(&p.graph, &p.plan, &rules).is_ok());
                for a in p.plan.arenas() {
                    prop_assert!(a.used <= MAX_ARENA, "arena of {} bytes", a.used);
                }
            }
            Err(e) => {
                prop_assert!(!e.message().contains("internal planner error"), "{e}");
                if too_big {
                    prop_assert!(e.is_infeasible(), "{e}");
                }
            }
        }
    }

    #[test]
    fn huge_csv_rows_plan_or_fail_cleanly(
        rows in prop::collection::vec((size(), 0u32..4, 1u32..4, prop::option::of(size())), 1..8),
        capacity in prop::option::of(size()),
    ) {
        let mut text = String::from("id,lower,upper,size,offset\n");
        for (k, (size, lower, len, offset)) in rows.iter().enumerate() {
            let offset = offset.map(|o| o.to_string()).unwrap_or_default();
            let _ = writeln!(text, "r{k},{lower},{},{size},{offset}", lower + len);
        }
        let Ok(csv) = planner::import::csv::parse(Path::new("huge.csv"), &text) else {
            return Ok(());
        };
        for kind in [PlannerKind::Greedy, PlannerKind::GreedyBySize, PlannerKind::default()] {
            match planner::plan_problem(&csv, "huge", &kind, capacity, 10_000) {
                Ok(planner::ProblemOutcome::Planned(p)) => {
                    prop_assert!(planner::verify::verify(&p.graph, &p.plan).is_ok());
                }
                Ok(planner::ProblemOutcome::DoesNotFit { .. }) => {}
                Err(e) => prop_assert!(!e.message().contains("internal planner error"), "{e}\n{text}"),
            }
        }
    }
}
