//! A concurrent group whose stacked scratch passes a bank's budget spills to the next bank
//! of `memory.constraints`, as a single model would; one that cannot spill is refused
//! naming the rule that fixes it.
#![cfg(feature = "std")]

use std::path::PathBuf;

use planner::manifest::Group;
use planner::plan::ArenaRole;
use planner::verify::verify_group;
use planner::{GroupPlanned, plan, plan_group};

const KWS: &str = "tiny_kws_dscnn_int8";
const VWW: &str = "tflm_person_detect_int8";

fn models_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models")
}

/// kws and person_detect on mps3-an547 with `constraints` (TOML) and `concurrent` (TOML).
fn group(concurrent: &str, constraints: &str) -> Group {
    let text = format!(
        "[group]\nname = \"g\"\nconcurrent = {concurrent}\n\n[[model]]\nname = \"{KWS}\"\nsource = \"{KWS}.tflite\"\n\n[[model]]\nname = \"{VWW}\"\nsource = \"{VWW}.tflite\"\n\n[platform]\npreset = \"mps3-an547\"\n\n[memory]\nconstraints = {constraints}\n"
    );
    Group::parse(&text, &models_dir().join("group.toml")).unwrap()
}

fn both() -> String {
    format!("[[\"{KWS}\", \"{VWW}\"]]")
}

/// Bytes each model's scratch takes in DTCM when planned alone with the whole budget.
fn dtcm_alone() -> Vec<u64> {
    let g = group("[]", "[{ name = \"DTCM\" }, { name = \"SRAM\" }]");
    g.models
        .iter()
        .map(|m| plan(m).unwrap().plan.arena_usages["DTCM"].used)
        .collect()
}

fn scratch(p: &GroupPlanned, memory: &str) -> u64 {
    p.arena(ArenaRole::Scratch, memory)
        .map_or(0, |a| a.arena.used)
}

/// Bytes the group takes in `memory`, every role.
fn total(p: &GroupPlanned, memory: &str) -> u64 {
    p.arenas
        .iter()
        .filter(|a| a.arena.memory == memory)
        .map(|a| a.arena.used)
        .sum()
}

#[test]
fn a_concurrent_group_spills_its_overflow_to_the_next_bank() {
    let alone = dtcm_alone();
    // Room for either model alone, not for both at once.
    let cap = alone[0].max(alone[1]) + 64;
    assert!(cap < alone[0] + alone[1]);
    let constraints = format!("[{{ name = \"DTCM\", max_size = {cap} }}, {{ name = \"SRAM\" }}]");

    let g = group(&both(), &constraints);
    let planned = plan_group(&g).unwrap();
    verify_group(&g, &planned).unwrap();
    assert!(total(&planned, "DTCM") <= cap, "{:?}", planned.arenas);
    let dtcm = planned.arena(ArenaRole::Scratch, "DTCM").unwrap();
    // The first model keeps the scratch it has alone; the second gets the rest of DTCM
    // and spills the remainder of its tensors to SRAM.
    assert_eq!(dtcm.users[0].bytes, alone[0], "{dtcm:?}");
    assert!(dtcm.users[1].bytes < alone[1], "{dtcm:?}");
    assert!(dtcm.users[1].base >= dtcm.users[0].bytes, "{dtcm:?}");
    let sram = planned.arena(ArenaRole::Scratch, "SRAM").unwrap();
    assert!(sram.users.iter().any(|u| u.model == 1), "{sram:?}");
    let spilled = planned.models[1]
        .plan
        .tensor_allocs
        .values()
        .filter_map(|a| a.binding.as_ref())
        .filter(|b| b.role == ArenaRole::Scratch && b.memory == "SRAM")
        .count();
    assert!(spilled > 0);

    // The same models in turn still share DTCM from base 0, as planned alone.
    let g = group("[]", &constraints);
    let planned = plan_group(&g).unwrap();
    verify_group(&g, &planned).unwrap();
    assert_eq!(scratch(&planned, "DTCM"), alone[0].max(alone[1]));
    assert!(
        planned
            .arena(ArenaRole::Scratch, "DTCM")
            .unwrap()
            .users
            .iter()
            .all(|u| u.base == 0)
    );
}

#[test]
fn a_concurrent_group_that_fits_is_planned_as_before() {
    let constraints = "[{ name = \"DTCM\" }, { name = \"SRAM\" }]";
    let g = group(&both(), constraints);
    let planned = plan_group(&g).unwrap();
    let alone: Vec<_> = g.models.iter().map(|m| plan(m).unwrap()).collect();
    // Nothing re-planned: every model's slots are the ones it has alone, moved by its base.
    for (k, (p, a)) in planned.models.iter().zip(&alone).enumerate() {
        assert_eq!(p.plan.tensor_allocs.len(), a.plan.tensor_allocs.len());
        for (id, alloc) in &a.plan.tensor_allocs {
            let b = alloc.binding.as_ref().unwrap();
            let g = p.plan.tensor_allocs[id].binding.as_ref().unwrap();
            assert_eq!((&g.memory, g.role), (&b.memory, b.role), "model {k} {id}");
        }
    }
}

#[test]
fn a_concurrent_group_with_no_bank_to_spill_to_names_the_rule() {
    let alone = dtcm_alone();
    let cap = alone[0].max(alone[1]) + 64;
    let g = group(
        &both(),
        &format!("[{{ name = \"DTCM\", max_size = {cap} }}]"),
    );
    let e = plan_group(&g).unwrap_err();
    let msg = e.message();
    assert!(
        msg.contains("memory DTCM") && msg.contains(&format!("budget {cap}")),
        "{msg}"
    );
    let help = e.help_text().unwrap();
    assert!(
        help.contains("raise the max_size of DTCM in memory.constraints to at least"),
        "{help}"
    );
    assert!(
        help.contains(&format!("take `{VWW}` out of its [group] concurrent set")),
        "{help}"
    );
    // The error points at the max_size line.
    let (_, line, _) = e.location().expect("the max_size line");
    assert_eq!(line, 17, "{e}");
    // The figure it names is enough for these plans.
    let need: u64 = help
        .split("to at least ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    let g = group(
        &both(),
        &format!("[{{ name = \"DTCM\", max_size = {need} }}]"),
    );
    let planned = plan_group(&g).unwrap();
    verify_group(&g, &planned).unwrap();
}
