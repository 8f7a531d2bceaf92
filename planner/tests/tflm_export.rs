//! `planner export tflm` on every bundled model, without Python: the exported file reads
//! back with our own reader as the same graph, carries exactly the plan's offsets, and those
//! offsets are valid under TFLM's own lifetime rules (checked here independently of the
//! planner). `tests/data/tflm_export.json`, written by `scripts/tflm_export_check.py` from
//! TFLM runs, must cover every model with identical outputs and an arena no larger.

mod common;

use std::path::PathBuf;

use common::{bundled_models, root, tflite_files};
use planner::export::tflm;
use planner::graph::Graph;
use planner::manifest::Manifest;

fn models() -> Vec<PathBuf> {
    let v = bundled_models(&root());
    assert_eq!(v.len(), 12, "{v:?}");
    v
}

/// TFLM's lifetimes (`micro_allocation_info.cc`): inputs from before op 0, each tensor from
/// its first writer to its last reader, outputs to after the last op. As `(first, last)`
/// in op scopes (op k is scope k + 1).
fn tflm_lifetimes(g: &Graph) -> Vec<Option<(usize, usize)>> {
    let mut live: Vec<Option<(usize, usize)>> = vec![None; g.tensors.len()];
    let touch = |live: &mut Vec<Option<(usize, usize)>>, t: usize, s: usize| {
        live[t] = Some(live[t].map_or((s, s), |(a, b)| (a.min(s), b.max(s))));
    };
    for io in &g.inputs {
        touch(&mut live, io.tensor.get(), 0);
    }
    for (k, op) in g.ops.iter().enumerate() {
        for t in op.tensors() {
            touch(&mut live, t.get(), k + 1);
        }
    }
    for io in &g.outputs {
        touch(&mut live, io.tensor.get(), g.ops.len() + 1);
    }
    live
}

#[test]
fn export_round_trips_on_every_bundled_model() {
    for path in models() {
        let bytes = std::fs::read(&path).unwrap();
        let manifest = Manifest::for_model_file(&path);
        let done = tflm::export(&bytes, &manifest, &[], false).unwrap();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        // Read back with the project's reader: same graph, the plan's offsets.
        let again = planner::import::tflite::parse(&done.bytes, &path).unwrap();
        let before = planner::import::tflite::parse(&bytes, &path).unwrap();
        assert_eq!(again, before, "{name}");
        let stored = tflm::read(&done.bytes).unwrap().expect("offline plan");
        assert_eq!(stored, done.offline, "{name}");
        assert_eq!(stored.offsets.len(), before.tensors.len(), "{name}");
        assert!(tflm::read(&bytes).unwrap().is_none(), "{name}");
        let mut fixed = 0;
        for (t, &o) in before.tensors.iter().zip(&stored.offsets) {
            let alloc = done.planned.plan.tensor_allocs.get(&t.id);
            let scratch = alloc
                .and_then(|a| a.binding.as_ref())
                .is_some_and(|b| b.role == planner::plan::ArenaRole::Scratch);
            if o >= 0 {
                fixed += 1;
                assert!(scratch, "{name}: tensor {} has an offset", t.id);
                assert_eq!(o as u64, alloc.unwrap().offset, "{name}: tensor {}", t.id);
            } else {
                assert!(
                    !scratch || t.size == 0,
                    "{name}: tensor {} left to TFLM",
                    t.id
                );
            }
        }
        assert_eq!(fixed, done.fixed, "{name}");
        assert!(fixed > 0, "{name}");
        // Independently: offsets whose bytes meet belong to tensors TFLM never has live at
        // once.
        let live = tflm_lifetimes(&before);
        for (i, a) in before.tensors.iter().enumerate() {
            for (j, b) in before.tensors.iter().enumerate().skip(i + 1) {
                let (oa, ob) = (stored.offsets[i], stored.offsets[j]);
                if oa < 0 || ob < 0 {
                    continue;
                }
                let bytes_meet =
                    (oa as u64) < ob as u64 + b.size && (ob as u64) < oa as u64 + a.size;
                let (Some(la), Some(lb)) = (live[i], live[j]) else {
                    continue;
                };
                let live_together = la.0 <= lb.1 && lb.0 <= la.1;
                assert!(
                    !(bytes_meet && live_together),
                    "{name}: tensors {} and {} share bytes while live",
                    a.id,
                    b.id
                );
            }
        }
        // Re-exporting an exported model replaces its plan rather than adding a second.
        let twice = tflm::write(&done.bytes, &done.offline).unwrap();
        assert_eq!(tflm::read(&twice).unwrap(), Some(done.offline.clone()));
        assert_eq!(
            planner::import::tflite::parse(&twice, &path).unwrap(),
            before
        );
    }
}

/// The one-op models of `tests/data/tflm_scratch/` (`scripts/tflm_kernel_scratch.py`):
/// plans that mostly end off a multiple of 16.
fn generated() -> Vec<PathBuf> {
    tflite_files(&root().join("tests/data/tflm_scratch"))
}

/// The multi-subgraph models of `tests/run-models/control/` (`scripts/tflm_control_flow.py`).
fn control_flow() -> Vec<PathBuf> {
    let v = tflite_files(&root().join("tests/run-models/control"));
    assert!(v.len() >= 4, "{v:?}");
    v
}

#[test]
fn stored_tflm_results_cover_every_model() {
    let text = std::fs::read_to_string(root().join("tests/data/tflm_export.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut off_16 = 0;
    let sections = [
        ("models", models()),
        ("generated", generated()),
        ("control", control_flow()),
    ];
    for (section, paths) in sections {
        for path in paths {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let m = &v[section][&name];
            assert_eq!(
                m["outputs_identical"], true,
                "{name}: rerun scripts/tflm_export_check.py"
            );
            let total = |k: &str| m[k]["total"].as_u64().unwrap();
            let head = |k: &str| m[k]["head"].as_u64().unwrap();
            assert!(total("exported") <= total("original"), "{name}");
            assert!(head("exported") <= head("original"), "{name}");
            let c = &m["control_greedy"];
            assert!(
                c["tflm_head"].as_u64() >= c["planned_head"].as_u64(),
                "{name}"
            );
            assert_eq!(c["outputs_identical"], true, "{name}");
            // The head the exporter says is TFLM's head on the exported model: the plan's end
            // with TFLM's final rounding to 16, and the kernels' scratch inside the plan.
            let bytes = std::fs::read(&path).unwrap();
            let done = tflm::export(&bytes, &Manifest::for_model_file(&path), &[], false)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            if section == "control" {
                // Only subgraph 0's tensors are exported; TFLM places the other subgraphs'
                // around them, so its head is its own figure, and the plan's offsets must
                // be subgraph 0's alone.
                let offline = tflm::read(&done.bytes).unwrap().expect("offline plan");
                let first = tflm::tensor_counts(&bytes).unwrap()[0];
                assert!(offline.offsets[first..].iter().all(|&o| o < 0), "{name}");
                assert!(offline.offsets[..first].iter().any(|&o| o >= 0), "{name}");
                continue;
            }
            assert_eq!(
                done.head,
                head("exported"),
                "{name}: exporter's head against TFLM's"
            );
            assert!(done.head <= done.tflm_head, "{name}");
            let end = done
                .planned
                .plan
                .arena_usages
                .values()
                .map(|a| a.used)
                .max()
                .unwrap();
            if !end.is_multiple_of(16) {
                off_16 += 1;
            }
        }
    }
    assert!(off_16 >= 20, "{off_16} plans end off a multiple of 16");
}

#[test]
fn kernel_scratch_and_bad_plans_are_handled() {
    let path = root().join("models/tflm_keyword_scrambled_8bit.tflite");
    let bytes = std::fs::read(&path).unwrap();
    let manifest = Manifest::for_model_file(&path);
    let g = planner::import::tflite::parse(&bytes, &path).unwrap();
    let svdf = g.ops.iter().filter(|o| o.opcode == "SVDF").count();
    let scratch = tflm::reference_kernel_scratch(&g, &[]).unwrap();
    assert_eq!(scratch.len(), 2 * svdf, "{scratch:?}");
    let e = tflm::with_kernel_scratch(&g, &[(99, 16)]).unwrap_err();
    assert!(e.to_string().contains("op 99"), "{e}");
    // Room for an extra buffer at op 0 makes the head grow by at most its size.
    let base = tflm::export(&bytes, &manifest, &[], false).unwrap();
    let more = tflm::export(&bytes, &manifest, &[(0, 4096)], false).unwrap();
    let head = |d: &tflm::Export| d.planned.plan.arena_usages["SRAM"].used;
    assert!(head(&more) >= 4096 && head(&more) <= head(&base) + 4096);
    // Two scratch arenas cannot be said to TFLM.
    let mut two = manifest.clone();
    two.platform.memories.push(planner::manifest::Memory {
        name: "DTCM".into(),
        size: Some(64),
        writable: true,
        readable_in_place: true,
        origin: None,
    });
    two.constraints = vec![
        planner::plan::MemoryConstraint {
            name: "DTCM".into(),
            max_size: Some(64),
            arena_alignment: None,
            app_bound: false,
        },
        planner::plan::MemoryConstraint {
            name: "SRAM".into(),
            max_size: None,
            arena_alignment: None,
            app_bound: false,
        },
    ];
    let e = tflm::export(&bytes, &two, &[], false).unwrap_err();
    assert!(e.to_string().contains("TFLM has one arena"), "{e}");
}

#[test]
fn an_int4_filter_keeps_room_for_tflm_s_unpacking_buffer() {
    // The importer unpacks the filters at build time; TFLM still unpacks them at `Prepare`
    // into a scratch buffer of one byte per element, which the export must leave room for.
    for (model, elements) in [
        ("op_b7_conv_i4_same_s2_relu6", 4 * 3 * 3 * 3),
        ("op_b7_dwconv_i4_m1_same_s2", 3 * 3 * 5),
        ("op_b7_fc_i4_per_tensor_odd", 5 * 13),
    ] {
        let path = root().join(format!("tests/run-models/single/{model}.tflite"));
        let bytes = std::fs::read(&path).unwrap();
        let g = planner::import::tflite::parse(&bytes, &path).unwrap();
        let filter = g.ops[0].inputs[1].unwrap().get();
        assert_eq!(
            g.tensors[filter].size, elements,
            "{model}: unpacked, a byte each"
        );
        let done = tflm::export(&bytes, &Manifest::for_model_file(&path), &[], false).unwrap();
        assert_eq!(done.kernel_scratch, [(0, elements)], "{model}");
        let scratch = done.planned.graph.ops[0].scratch.len();
        assert_eq!(
            scratch, 1,
            "{model}: the unpacking buffer is planned at op 0"
        );
    }
}

#[test]
fn an_export_is_never_above_tflm_s_own_plan_unless_the_planner_is_kept() {
    // `greedy` needs 73728 bytes on person_detect, TFLM's own plan 55296.
    let path = root().join("models/tflm_person_detect_int8.tflite");
    let bytes = std::fs::read(&path).unwrap();
    let mut manifest = Manifest::for_model_file(&path);
    manifest.planner = planner::pack::PlannerKind::Greedy;
    let done = tflm::export(&bytes, &manifest, &[], false).unwrap();
    assert_eq!(done.replaced.as_deref(), Some("greedy"));
    assert_eq!(done.planned.planner, "tflm");
    assert_eq!((done.head, done.tflm_head), (55296, 55296));
    let kept = tflm::export(&bytes, &manifest, &[], true).unwrap();
    assert_eq!(kept.replaced, None);
    assert_eq!((kept.head, kept.tflm_head), (73728, 55296));
    // The default planner's plan is kept: it is no larger.
    let auto = tflm::export(&bytes, &Manifest::for_model_file(&path), &[], false).unwrap();
    assert_eq!(auto.replaced, None);
    assert!(auto.head <= auto.tflm_head);
}
