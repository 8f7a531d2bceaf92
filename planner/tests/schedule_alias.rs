//! Memory-aware operator order and in-place aliasing: orders are topological, aliased
//! tensors are never live at once with different contents, plans verify, and both lower
//! the peak where the graph allows it.

use std::fmt::Write as _;
use std::path::Path;

use planner::graph::Graph;
use planner::manifest::Manifest;
use planner::schedule;
use proptest::prelude::*;

fn parse(text: &str) -> (Manifest, Graph) {
    let m = Manifest::parse(text, Path::new("t.toml")).expect("test manifests parse");
    let g = planner::import::load(&m).expect("test graphs read");
    (m, g)
}

const CHAIN: &str = r#"
[model]
name = "c"
tensors = [
  { id = "in", dtype = "i8", shape = [10] },
  { id = "a", dtype = "i8", shape = [100] },
  { id = "b", dtype = "i8", shape = [10, 10] },
  { id = "c", dtype = "i8", shape = [10] },
]
ops = [
  { opcode = "FULLY_CONNECTED", inputs = ["in"], outputs = ["a"] },
  { opcode = "RESHAPE", inputs = ["a"], outputs = ["b"] },
  { opcode = "FULLY_CONNECTED", inputs = ["b"], outputs = ["c"] },
]
[platform]
preset = "generic"
min_alignment = 1
"#;

#[test]
fn reshape_aliasing_shares_the_slot_and_lowers_the_peak() {
    let (m, g) = parse(CHAIN);
    let plain = planner::plan_graph(&m, &g).unwrap();
    assert_eq!(plain.plan.arena_usages["SRAM"].used, 200);
    let (m, g) = parse(&format!("{CHAIN}[memory]\nalias_reshapes = true\n"));
    let p = planner::plan_graph(&m, &g).unwrap();
    assert_eq!(p.graph.aliases.len(), 1);
    let (a, b) = (
        p.plan.get_allocation("a").unwrap(),
        p.plan.get_allocation("b").unwrap(),
    );
    assert_eq!((a.memory.as_str(), a.offset), (b.memory.as_str(), b.offset));
    assert_eq!(p.plan.arena_usages["SRAM"].used, 110);
    planner::verify::verify(&p.graph, &p.plan).unwrap();
    // The verifier refuses the same bytes for the pair once they are not aliases.
    let mut unaliased = p.graph.clone();
    unaliased.aliases.clear();
    assert!(planner::verify::verify(&unaliased, &p.plan).is_err());
    let explain = planner::report::explain(&p, &p.graph, Some("b"));
    assert!(
        explain.contains("alias of `a`: shares its slot"),
        "{explain}"
    );
}

#[test]
fn elementwise_in_place_only_when_opted_in() {
    let text = CHAIN.replace("\"RESHAPE\"", "\"RELU\"");
    let (m, g) = parse(&format!("{text}[memory]\nalias_reshapes = true\n"));
    assert!(
        planner::plan_graph(&m, &g)
            .unwrap()
            .graph
            .aliases
            .is_empty()
    );
    // `in_place_ops` runs ops in place (in_place.rs), never as aliases; an inline op has no
    // typed options, which an in-place kernel call needs, so it stays out of place.
    let (m, g) = parse(&format!("{text}[memory]\nin_place_ops = [\"relu\"]\n"));
    let p = planner::plan_graph(&m, &g).unwrap();
    assert!(p.graph.aliases.is_empty());
    assert!(p.graph.in_place.is_empty());
}

#[test]
fn an_input_still_needed_later_is_not_aliased() {
    let text = CHAIN.replace(
        "inputs = [\"b\"], outputs = [\"c\"]",
        "inputs = [\"b\", \"a\"], outputs = [\"c\"]",
    );
    let (m, g) = parse(&format!("{text}[memory]\nalias_reshapes = true\n"));
    let p = planner::plan_graph(&m, &g).unwrap();
    assert!(p.graph.aliases.is_empty());
}

#[test]
fn memory_schedule_finishes_one_branch_first() {
    let text = include_str!("data/branches.toml");
    let (m, g) = parse(text);
    let fixed = planner::plan_graph(&m, &g).unwrap();
    assert_eq!(fixed.order, [0, 1, 2, 3, 4]);
    let (m, g) = parse(&format!("{text}[memory]\nschedule = \"memory\"\n"));
    let p = planner::plan_graph(&m, &g).unwrap();
    assert!(schedule::is_valid_order(&g, &p.order));
    assert_ne!(p.order, [0, 1, 2, 3, 4]);
    let opcodes: Vec<&str> = p.graph.ops.iter().map(|o| o.opcode.as_str()).collect();
    assert_eq!(opcodes.len(), 5);
    assert!(p.plan.arena_usages["SRAM"].used < fixed.plan.arena_usages["SRAM"].used);
    planner::verify::verify(&p.graph, &p.plan).unwrap();
}

/// A random DAG: op k writes tensor k+1 from up to three earlier tensors; op types mix
/// reshapes, elementwise ops and others.
fn dag() -> impl Strategy<Value = String> {
    (3usize..16).prop_flat_map(|n| {
        (
            prop::collection::vec((1u32..600, prop::sample::select(vec![0u8, 1, 2, 3])), n),
            prop::collection::vec(prop::collection::vec(any::<prop::sample::Index>(), 1..3), n),
            any::<bool>(),
        )
            .prop_map(move |(sizes, inputs, order_memory)| {
                let mut s = String::from("[model]\nname = \"d\"\ntensors = [\n  { id = \"t0\", dtype = \"u8\", shape = [64] },\n");
                for (k, (size, kind)) in sizes.iter().enumerate() {
                    // Reshapes and elementwise ops keep their first input's size.
                    let size = if *kind <= 1 && k > 0 { sizes[k - 1].0.max(1) } else { *size };
                    let _ = writeln!(s, "  {{ id = \"t{}\", dtype = \"u8\", shape = [{size}] }},", k + 1);
                }
                s.push_str("]\nops = [\n");
                for (k, (_, kind)) in sizes.iter().enumerate() {
                    let opcode = ["RESHAPE", "ADD", "CONV_2D", "CONCATENATION"][*kind as usize];
                    let mut ins: Vec<usize> = inputs[k].iter().map(|i| i.index(k + 1)).collect();
                    if *kind <= 1 {
                        ins.insert(0, k);
                    }
                    ins.dedup();
                    let ins: Vec<String> = ins.iter().map(|i| format!("\"t{i}\"")).collect();
                    let _ = writeln!(s, "  {{ opcode = \"{opcode}\", inputs = [{}], outputs = [\"t{}\"] }},", ins.join(", "), k + 1);
                }
                let _ = writeln!(s, "]\n[platform]\npreset = \"generic\"\nmin_alignment = 1\n[memory]\nalias_reshapes = true\nin_place_ops = [\"ADD\"]");
                if order_memory {
                    s.push_str("schedule = \"memory\"\n");
                }
                s
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn orders_are_topological_and_aliases_never_overlap_in_time(text in dag()) {
        let (m, g) = parse(&text);
        let p = planner::plan_graph(&m, &g).unwrap();
        prop_assert!(schedule::is_valid_order(&g, &p.order), "{:?}", p.order);
        // Every op's inputs are produced before it in the new order.
        let mut produced: Vec<bool> = vec![false; g.tensors.len()];
        for io in &g.inputs { produced[io.tensor.get()] = true; }
        for op in &p.graph.ops {
            for t in op.inputs.iter().flatten() {
                prop_assert!(produced[t.get()], "{} read before it is written", g.tensor(*t).id);
            }
            for t in &op.outputs { produced[t.get()] = true; }
        }
        // An alias comes to life at the op where its target is read for the last time.
        for &(a, t) in &p.graph.aliases {
            let producer = p.graph.ops.iter().position(|o| o.outputs.contains(&a)).unwrap();
            let last_read = p.graph.ops.iter().rposition(|o| o.tensors().any(|x| x == t)).unwrap();
            prop_assert_eq!(producer, last_read);
            prop_assert!(!p.graph.outputs.iter().any(|io| io.tensor == t));
        }
        planner::verify::verify(&p.graph, &p.plan).map_err(|v| TestCaseError::fail(format!("{v:?}")))?;
        // The memory order never raises the peak of live bytes.
        let identity: Vec<u32> = (0..g.ops.len() as u32).collect();
        prop_assert!(schedule::peak(&g, &p.order, 1) <= schedule::peak(&g, &identity, 1));
        let again = planner::plan_graph(&m, &g).unwrap();
        prop_assert_eq!(serde_json::to_string(&again.plan).unwrap(), serde_json::to_string(&p.plan).unwrap());
        prop_assert_eq!(again.order, p.order);
    }
}
