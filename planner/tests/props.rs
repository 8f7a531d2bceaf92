//! Property tests over random graphs and bank setups: every planner's plan passes the
//! verifier, budgets hold, `hill_climb` is never worse than `greedy_by_size`, and planning is
//! deterministic. Inputs that cannot be planned give an error, never a panic.

use std::fmt::Write as _;
use std::path::Path;

use planner::manifest::Manifest;
use planner::verify::{VerifyRules, verify_with};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Case {
    /// (size, alignment hint exponent or none, kind 0=activation 1=constant 2=variable)
    tensors: Vec<(u32, Option<u8>, u8)>,
    /// per op: (inputs as tensor indices, output index)
    ops: Vec<(Vec<usize>, usize)>,
    /// per writable bank: budget
    banks: Vec<u32>,
    /// tensors pinned to a bank: (tensor, bank)
    pins: Vec<(usize, usize)>,
    stage_to: Option<usize>,
    min_align_exp: u8,
}

fn case() -> impl Strategy<Value = Case> {
    (2usize..14, 1usize..4).prop_flat_map(|(n_ops, n_banks)| {
        let n_tensors = n_ops + 6;
        (
            prop::collection::vec(
                (
                    1u32..3000,
                    prop::option::weighted(0.2, 0u8..6),
                    prop::sample::select(vec![0u8, 0, 0, 1, 1, 2]),
                ),
                n_tensors,
            ),
            prop::collection::vec(prop::collection::vec(0usize..n_tensors, 1..4), n_ops),
            prop::collection::vec(1000u32..20000, n_banks),
            prop::collection::vec((0usize..n_tensors, 0usize..n_banks), 0..3),
            prop::option::of(0usize..n_banks),
            0u8..5,
        )
            .prop_map(
                move |(tensors, op_inputs, banks, pins, stage_to, min_align_exp)| {
                    // Op k writes activation tensor k's slot (outputs are never constants).
                    let mut tensors = tensors;
                    let ops = op_inputs
                        .into_iter()
                        .enumerate()
                        .map(|(k, ins)| {
                            tensors[k].2 = 0;
                            (ins.into_iter().filter(|&i| i != k).collect(), k)
                        })
                        .collect();
                    Case {
                        tensors,
                        ops,
                        banks,
                        pins,
                        stage_to,
                        min_align_exp,
                    }
                },
            )
    })
}

fn manifest(c: &Case, planner: &str) -> String {
    let mut s = String::from("[model]\nname = \"p\"\ntensors = [\n");
    for (i, (size, align, kind)) in c.tensors.iter().enumerate() {
        let _ = write!(s, "  {{ id = \"t{i}\", dtype = \"u8\", shape = [{size}]");
        if let Some(a) = align {
            let _ = write!(s, ", alignment = {}", 1u32 << a);
        }
        match kind {
            1 => s.push_str(", constant = true"),
            2 => s.push_str(", variable = true"),
            _ => {}
        }
        s.push_str(" },\n");
    }
    s.push_str("]\nops = [\n");
    for (ins, out) in &c.ops {
        let ins: Vec<String> = ins.iter().map(|i| format!("\"t{i}\"")).collect();
        let _ = writeln!(
            s,
            "  {{ opcode = \"OP\", inputs = [{}], outputs = [\"t{out}\"] }},",
            ins.join(", ")
        );
    }
    s.push_str("]\n[platform]\nmemories = [\n");
    for (b, size) in c.banks.iter().enumerate() {
        let _ = writeln!(
            s,
            "  {{ name = \"B{b}\", size = {size}, writable = true }},"
        );
    }
    s.push_str("  { name = \"ROM\", size = \"1M\", writable = false },\n]\n");
    let _ = writeln!(s, "min_alignment = {}", 1u32 << c.min_align_exp);
    let _ = writeln!(s, "[memory]\nplanner = \"{planner}\"\nconstraints = [");
    for b in 0..c.banks.len() {
        let _ = writeln!(s, "  {{ name = \"B{b}\" }},");
    }
    s.push_str("]\ntensors = [\n");
    for (t, b) in &c.pins {
        let _ = writeln!(
            s,
            "  {{ id = \"t{t}\", type = \"scratch\", attributes = {{ memory = \"B{b}\" }} }},"
        );
    }
    if let Some(b) = c.stage_to {
        let _ = writeln!(
            s,
            "  {{ type = \"constant\", id = \"t1*\", attributes = {{ memory = \"ROM\", constant_destination_memory = \"B{b}\" }} }},"
        );
    }
    s.push_str("]\n");
    s
}

fn plan(
    text: &str,
) -> (
    Manifest,
    planner::graph::Graph,
    planner::Result<planner::Planned>,
) {
    let m = Manifest::parse(text, Path::new("prop.toml")).expect("generated manifests parse");
    let g = planner::import::load(&m).expect("generated graphs read");
    let p = planner::plan_graph(&m, &g);
    (m, g, p)
}

fn scratch_used(p: &planner::Planned, bank: &str) -> u64 {
    p.plan.arena_usages.get(bank).map_or(0, |a| a.used)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn every_plan_verifies_and_keeps_budgets(c in case()) {
        let mut results = Vec::new();
        for planner in ["greedy", "greedy_by_size", "hill_climb"] {
            let text = manifest(&c, planner);
            let (m, g, p) = plan(&text);
            match &p {
                Ok(p) => {
                    let rules = VerifyRules::from_manifest(&m);
                    if let Err(v) = verify_with(&g, &p.plan, &rules) {
                        prop_assert!(false, "{planner}: {v:?}\n{text}");
                    }
                    for (b, size) in c.banks.iter().enumerate() {
                        let name = format!("B{b}");
                        let total: u64 = p.plan.arenas().filter(|a| a.memory == name).map(|a| a.used).sum();
                        prop_assert!(total <= u64::from(*size), "{planner}: {name} holds {total} > {size}");
                    }
                    // Determinism: the same input gives the same bytes.
                    let (_, _, again) = plan(&text);
                    let a = serde_json::to_string(&p.plan).unwrap();
                    let b = serde_json::to_string(&again.unwrap().plan).unwrap();
                    prop_assert_eq!(a, b);
                }
                Err(e) => {
                    prop_assert!(!e.message().contains("internal planner error"), "{planner}: {e}");
                }
            }
            results.push(p);
        }
        if let (Ok(gbs), Ok(hc)) = (&results[1], &results[2]) {
            for b in 0..c.banks.len() {
                let name = format!("B{b}");
                prop_assert!(
                    scratch_used(hc, &name) <= scratch_used(gbs, &name),
                    "hill_climb {} > greedy_by_size {} in {name}",
                    scratch_used(hc, &name),
                    scratch_used(gbs, &name)
                );
            }
        }
        if results[1].is_ok() {
            prop_assert!(results[2].is_ok(), "hill_climb failed where greedy_by_size planned");
        }
    }
}
