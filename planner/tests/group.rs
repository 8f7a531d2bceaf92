//! Group plans: several bundled models (`models/`) planned together, checked by the
//! independent verifier with cross-model lifetimes.
#![cfg(feature = "std")]

use std::path::PathBuf;

use planner::manifest::Group;
use planner::plan::ArenaRole;
use planner::verify::verify_group;
use planner::{GroupPlanned, plan, plan_group};

fn models_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models")
}

/// A group manifest over bundled models on the mps3-an547 platform, scratch in DTCM then
/// SRAM; `concurrent` is TOML for `[group] concurrent`.
fn group(models: &[&str], concurrent: &str) -> Group {
    let mut text = format!("[group]\nname = \"g\"\nconcurrent = {concurrent}\n\n");
    for m in models {
        text.push_str(&format!(
            "[[model]]\nname = \"{m}\"\nsource = \"{m}.tflite\"\n\n"
        ));
    }
    text.push_str(
        "[platform]\npreset = \"mps3-an547\"\n\n[memory]\nconstraints = [{ name = \"DTCM\" }, { name = \"SRAM\" }]\n",
    );
    Group::parse(&text, &models_dir().join("group.toml")).unwrap()
}

const KWS: &str = "tiny_kws_dscnn_int8";
const VWW: &str = "tflm_person_detect_int8";

fn scratch(p: &GroupPlanned, memory: &str) -> u64 {
    p.arena(ArenaRole::Scratch, memory)
        .map_or(0, |a| a.arena.used)
}

#[test]
fn sequential_models_share_scratch_as_planned_alone() {
    let g = group(&[KWS, VWW], "[]");
    let planned = plan_group(&g).unwrap();
    verify_group(&g, &planned).unwrap();
    let alone: Vec<_> = g.models.iter().map(|m| plan(m).unwrap()).collect();
    let dtcm: Vec<u64> = alone
        .iter()
        .map(|p| p.plan.arena_usages.get("DTCM").map_or(0, |a| a.used))
        .collect();
    assert_eq!(scratch(&planned, "DTCM"), dtcm[0].max(dtcm[1]));
    let arena = planned.arena(ArenaRole::Scratch, "DTCM").unwrap();
    assert_eq!(arena.users.len(), 2);
    assert_eq!(arena.separate, dtcm[0] + dtcm[1]);
    // Each model's scratch slots are the bytes it has alone.
    for (p, a) in planned.models.iter().zip(&alone) {
        for (id, alloc) in &a.plan.tensor_allocs {
            let b = alloc.binding.as_ref().unwrap();
            if b.role == ArenaRole::Scratch {
                assert_eq!(p.plan.tensor_allocs[id].offset, alloc.offset, "{id}");
            }
        }
    }
}

#[test]
fn concurrent_models_get_disjoint_scratch() {
    let g = group(
        &[KWS, VWW],
        "[[\"tiny_kws_dscnn_int8\", \"tflm_person_detect_int8\"]]",
    );
    let planned = plan_group(&g).unwrap();
    verify_group(&g, &planned).unwrap();
    let arena = planned.arena(ArenaRole::Scratch, "DTCM").unwrap();
    assert!(arena.arena.used >= arena.separate, "{arena:?}");
    assert!(arena.users[1].base >= arena.users[0].bytes);
}

#[test]
fn overlapping_concurrent_models_are_rejected_naming_both() {
    let g = group(
        &[KWS, VWW],
        "[[\"tiny_kws_dscnn_int8\", \"tflm_person_detect_int8\"]]",
    );
    let mut planned = plan_group(&g).unwrap();
    // Move the second model's scratch down onto the first model's.
    let base = planned.arena(ArenaRole::Scratch, "DTCM").unwrap().users[1].base;
    for alloc in planned.models[1].plan.tensor_allocs.values_mut() {
        let b = alloc.binding.as_mut().unwrap();
        if b.role == ArenaRole::Scratch && b.memory == "DTCM" {
            b.offset -= base;
            alloc.offset -= base;
        }
    }
    let err = verify_group(&g, &planned).unwrap_err();
    let text: Vec<String> = err.iter().map(|v| v.to_string()).collect();
    let hit = text
        .iter()
        .find(|t| t.contains("may run at the same time"))
        .unwrap_or_else(|| panic!("{text:?}"));
    assert!(hit.contains(KWS) && hit.contains(VWW), "{hit}");
    // The same plan is valid when the models run in turn.
    let seq = group(&[KWS, VWW], "[]");
    verify_group(&seq, &planned).unwrap();
}

#[test]
fn persistent_overlap_is_rejected() {
    let g = group(&["tflm_micro_speech_lstm", "tflm_mnist_lstm_int8"], "[]");
    let mut planned = plan_group(&g).unwrap();
    let arena = planned
        .arenas
        .iter()
        .find(|a| a.arena.role == ArenaRole::Persistent && a.users.len() == 2)
        .expect("both LSTM models keep state in one memory");
    let (memory, base) = (arena.arena.memory.clone(), arena.users[1].base);
    for alloc in planned.models[1].plan.tensor_allocs.values_mut() {
        let b = alloc.binding.as_mut().unwrap();
        if b.role == ArenaRole::Persistent && b.memory == memory {
            b.offset -= base;
            alloc.offset -= base;
        }
    }
    let err = verify_group(&g, &planned).unwrap_err();
    assert!(
        err.iter()
            .any(|v| v.to_string().contains("persistent state is never shared")),
        "{err:?}"
    );
}

#[test]
fn identical_constants_are_stored_once() {
    // The same model twice: every constant buffer is shared, persistent state is not. The
    // last three hold equal constants of their own (tiny_str_ww's tensors 12, 13 and 14):
    // each of model b's takes its own slot of model a's, not all the first (which failed
    // verification, "share bytes in the constant arena": the outside audit's
    // `repro/turn4/dup_group.toml`).
    for m in [
        KWS,
        "tiny_str_ww_int8",
        "te_mcunet_vww",
        "te_mcunetv2_large",
    ] {
        let text = format!(
            "[[model]]\nname = \"a\"\nsource = \"{m}.tflite\"\n\n[[model]]\nname = \"b\"\nsource = \"{m}.tflite\"\n"
        );
        let g = Group::parse(&text, &models_dir().join("twice.toml")).unwrap();
        let planned = plan_group(&g).unwrap_or_else(|e| panic!("{m}: {e}"));
        verify_group(&g, &planned).unwrap();
        let alone = plan(&g.models[0]).unwrap();
        for (memory, a) in &alone.plan.constant_arenas {
            let group = planned.arena(ArenaRole::Constant, memory).unwrap();
            assert_eq!(group.arena.used, a.used, "{m} {memory}");
            assert_eq!(group.separate, 2 * a.used);
        }
        assert!(planned.shared_constants > 0);
    }
    let repro = models_dir().join("../planner/tests/data/repro/turn4/dup_group.toml");
    let g = planner::manifest::load_group(&repro).unwrap();
    let planned = plan_group(&g).unwrap();
    verify_group(&g, &planned).unwrap();
}

#[test]
fn a_group_that_does_not_fit_names_bank_need_and_bound() {
    let mut g = group(
        &[KWS, VWW],
        "[[\"tiny_kws_dscnn_int8\", \"tflm_person_detect_int8\"]]",
    );
    let alone: Vec<u64> = g
        .models
        .iter()
        .map(|m| plan(m).unwrap().plan.arena_usages["DTCM"].used)
        .collect();
    // Room for either model alone, not for both at once.
    let cap = alone[0].max(alone[1]) + 64;
    for m in &mut g.models {
        m.constraints.truncate(1);
        m.constraints[0].max_size = Some(cap);
    }
    let e = plan_group(&g).unwrap_err();
    let msg = e.message();
    assert!(
        msg.contains("memory DTCM") && msg.contains("lower bound"),
        "{msg}"
    );
    assert!(msg.contains(&format!("budget {cap}")), "{msg}");
    // A limit set in code has no manifest line to point at; one in the file does.
    assert!(e.location().is_none(), "{e}");
    let text = format!(
        "[group]\nname = \"g\"\nconcurrent = [[\"{KWS}\", \"{VWW}\"]]\n\n[[model]]\nname = \"{KWS}\"\nsource = \"{KWS}.tflite\"\n\n[[model]]\nname = \"{VWW}\"\nsource = \"{VWW}.tflite\"\n\n[platform]\npreset = \"mps3-an547\"\n\n[memory]\nconstraints = [{{ name = \"DTCM\", max_size = {cap} }}]\n"
    );
    let e =
        plan_group(&Group::parse(&text, &models_dir().join("group.toml")).unwrap()).unwrap_err();
    let (_, line, _) = e.location().expect("the max_size line");
    assert_eq!(line, 17, "{e}");
    assert!(
        e.to_string()
            .contains(&format!("the max_size of DTCM: {cap} bytes set here")),
        "{e}"
    );
    g.concurrent.clear();
    plan_group(&g).unwrap();
}

#[test]
fn a_model_is_a_unit_of_one() {
    let g = group(&[KWS], "[]");
    let m = &g.models[0];
    let graph = planner::import::load(m).unwrap();
    let alone = planner::plan_graph(m, &graph).unwrap();
    let unit = planner::plan_unit(&planner::Unit::one(m, &graph)).unwrap();
    let grouped = plan_group(&g).unwrap();
    for p in [&unit.models[0], &grouped.models[0]] {
        assert_eq!(p.plan, alone.plan);
        assert_eq!(p.decisions, alone.decisions);
    }
    // The unit's arenas are the model's own.
    let own: Vec<_> = alone.plan.arenas().cloned().collect();
    let mut records: Vec<_> = unit.arenas.iter().map(|a| a.arena.clone()).collect();
    records.sort_by(|a, b| (a.role.name(), &a.memory).cmp(&(b.role.name(), &b.memory)));
    let mut own_sorted = own.clone();
    own_sorted.sort_by(|a, b| (a.role.name(), &a.memory).cmp(&(b.role.name(), &b.memory)));
    assert_eq!(records, own_sorted);
    // One check for one model or many: a unit of one checks what verify_with checks, and
    // names no model.
    let rules = planner::verify::VerifyRules::from_manifest(m);
    let mut bad = alone.plan.clone();
    let scratch = bad
        .tensor_allocs
        .values_mut()
        .find(|a| {
            a.binding
                .as_ref()
                .is_some_and(|b| b.role == ArenaRole::Scratch)
        })
        .unwrap();
    scratch.offset += 1;
    let one = planner::verify::verify_with(&alone.graph, &bad, &rules).unwrap_err();
    let unit_one =
        planner::verify::verify_unit(&planner::verify::Unit::one(&alone.graph, &bad), &rules)
            .unwrap_err();
    assert_eq!(one, unit_one);
    assert!(
        one.iter().all(|v| !v.to_string().starts_with("model ")),
        "{one:?}"
    );
}
