//! The `tflm` planner against TensorFlow Lite Micro itself.
//!
//! `tests/data/tflm_figures.json` holds TFLM's own arena figures for every bundled model,
//! measured by `scripts/tflm_figures.py` (the `tflite-micro` PyPI interpreter's
//! `print_allocations`). Its `head` is TFLM's memory plan of the activations *and* of the
//! scratch buffers kernels request at `Prepare` time, which a `.tflite` file does not
//! describe. `tests/data/tflm_kernel_scratch.csv` lists those requests on the bundled models
//! (model, op, opcode, bytes, from TFLM's kernel rules); this test derives them again from
//! the model and checks that
//!
//! - `planner plan <model> --planner tflm` needs exactly TFLM's head on every model without
//!   kernel scratch (at least 9 of the 12), and
//! - with the listed kernel scratch buffers added, TFLM's planning rules give exactly TFLM's
//!   head on all 12, so each difference is those buffers and nothing else.

use std::path::{Path, PathBuf};

use planner::graph::{Graph, TensorKind};
use planner::import::tflite;
use planner::lifetimes;
use planner::manifest::Manifest;
use planner::pack::{Item, PlannerKind, Problem, tflm};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `(model, head)` from the stored TFLM figures.
fn tflm_heads() -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(root().join("tests/data/tflm_figures.json"))
        .expect("tests/data/tflm_figures.json (scripts/tflm_figures.py writes it)");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    doc["models"]
        .as_array()
        .expect("a models array")
        .iter()
        .map(|m| {
            (
                m["model"].as_str().expect("model name").to_string(),
                m["head"].as_u64().expect("head bytes"),
            )
        })
        .collect()
}

/// One kernel scratch request: `(op index, opcode, bytes)`.
type Request = (usize, String, u64);

/// The stored list of kernel scratch requests of `model`.
fn stored_requests(model: &str) -> Vec<Request> {
    let text = std::fs::read_to_string(root().join("tests/data/tflm_kernel_scratch.csv"))
        .expect("tests/data/tflm_kernel_scratch.csv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("model,") && !l.trim().is_empty())
        .map(|l| l.split(',').map(str::trim).collect::<Vec<_>>())
        .filter(|f| f[0] == model)
        .map(|f| {
            (
                f[1].parse().expect("op index"),
                f[2].to_string(),
                f[3].parse().expect("bytes"),
            )
        })
        .collect()
}

/// The scratch buffers TFLM's reference kernels request at `Prepare` for `graph`, in request
/// order: the exporter's rules ([`planner::export::tflm::kernel_scratch_rule`]), whose rules for
/// the other kernels `tflm_kernel_scratch.rs` checks on one-op models.
fn kernel_requests(graph: &Graph) -> Vec<Request> {
    planner::export::tflm::reference_kernel_scratch(graph, &[])
        .expect("every bundled model's kernels are known")
        .into_iter()
        .map(|(k, bytes)| (k, graph.ops[k].opcode.clone(), bytes))
        .collect()
}

/// TFLM's buffers for `graph`: every activation with a lifetime, in tensor order, then the
/// kernel scratch requests, each live during its op only.
fn tflm_problem(graph: &Graph, requests: &[Request]) -> Problem {
    let lt = lifetimes::compute(graph).expect("lifetimes");
    let mut items: Vec<Item> = graph
        .tensors
        .iter()
        .zip(&lt.live)
        .filter(|(t, _)| t.kind == TensorKind::Activation && t.size > 0)
        .filter_map(|(t, live)| {
            live.map(|(start, end)| Item {
                size: t.size,
                start,
                end,
                align: 16,
                fixed: None,
                spillable: false,
            })
        })
        .collect();
    for &(op, _, bytes) in requests {
        items.push(Item {
            size: bytes,
            start: op as u32,
            end: op as u32,
            align: 16,
            fixed: None,
            spillable: false,
        });
    }
    Problem {
        items,
        capacity: None,
    }
}

#[test]
fn tflm_planner_equals_tflm_on_the_bundled_models() {
    let heads = tflm_heads();
    assert_eq!(heads.len(), 12, "one figure per bundled model");
    let mut equal = Vec::new();
    let mut updated = String::new();
    for (model, head) in &heads {
        let path = root().join("models").join(format!("{model}.tflite"));
        let graph = tflite::read(&path).unwrap_or_else(|e| panic!("{model}: {e}"));
        let mut manifest = Manifest::for_model_file(&path);
        manifest.planner = PlannerKind::Tflm;
        let planned = planner::plan_graph(&manifest, &graph).unwrap_or_else(|e| panic!("{e}"));
        let used: u64 = planned.scratch_reports.iter().map(|r| r.used).sum();
        // The pipeline's `tflm` plan is TFLM's rules over the model's activations.
        let direct = tflm::pack(&tflm_problem(&graph, &[])).height;
        assert_eq!(
            used, direct,
            "{model}: pipeline against the direct TFLM problem"
        );

        let requests = kernel_requests(&graph);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            for (op, opcode, bytes) in &requests {
                updated.push_str(&format!("{model},{op},{opcode},{bytes}\n"));
            }
        } else {
            assert_eq!(
                requests,
                stored_requests(model),
                "{model}: kernel scratch requests against tests/data/tflm_kernel_scratch.csv (UPDATE_GOLDEN=1 rewrites it)"
            );
        }
        let with_scratch = tflm::pack(&tflm_problem(&graph, &requests)).height;
        println!(
            "{model}: tflm {used}, TFLM head {head}, with kernel scratch {with_scratch} ({} requests)",
            requests.len()
        );
        assert_eq!(
            with_scratch, *head,
            "{model}: TFLM's rules plus its kernel scratch buffers against TFLM's head"
        );
        if used == *head {
            equal.push(model.clone());
        } else {
            assert!(
                !requests.is_empty(),
                "{model}: tflm needs {used} bytes, TFLM {head}, and no kernel scratch explains it"
            );
        }
    }
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let path = root().join("tests/data/tflm_kernel_scratch.csv");
        let old = std::fs::read_to_string(&path).unwrap();
        let head: String = old
            .lines()
            .take_while(|l| l.starts_with('#') || l.starts_with("model,"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&path, head + &updated).unwrap();
    }
    assert!(
        equal.len() >= 9,
        "tflm equals TFLM on {} models: {equal:?}",
        equal.len()
    );
}
