//! Group plans of bundled models: scratch shared by models that run in turn, stacked for
//! models that run at once, and the time to plan a group of four.
//!
//! Run with `cargo run --release -p planner-bench --bin group_pairs`. For each pair of
//! `models/` it prints each model's scratch planned alone (DTCM first, then SRAM, on the
//! mps3-an547 preset), the group's scratch when the models run in turn and when they are
//! declared concurrent, and the bytes the group saves against separate plans (every arena).
//! Then it plans a group of four models (imports included) and prints the median time.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use planner::manifest::Group;
use planner::plan::ArenaRole;
use planner::{GroupPlanned, plan, plan_group};

fn models_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../models")
}

fn group(models: &[&str], concurrent: bool) -> Group {
    let names: Vec<String> = models.iter().map(|m| format!("{m:?}")).collect();
    let sets = if concurrent {
        format!("[[{}]]", names.join(", "))
    } else {
        "[]".into()
    };
    let mut text = format!("[group]\nname = \"g\"\nconcurrent = {sets}\n\n");
    for m in models {
        text.push_str(&format!(
            "[[model]]\nname = \"{m}\"\nsource = \"{m}.tflite\"\n\n"
        ));
    }
    text.push_str("[platform]\npreset = \"mps3-an547\"\n\n[memory]\nconstraints = [{ name = \"DTCM\" }, { name = \"SRAM\" }]\n");
    match Group::parse(&text, &models_dir().join("group.toml")) {
        Ok(g) => g,
        Err(e) => panic!("group manifest: {e}"),
    }
}

fn scratch(p: &GroupPlanned) -> u64 {
    p.arenas
        .iter()
        .filter(|a| a.arena.role == ArenaRole::Scratch)
        .map(|a| a.arena.used)
        .sum()
}

fn totals(p: &GroupPlanned) -> (u64, u64) {
    p.arenas
        .iter()
        .fold((0, 0), |(g, s), a| (g + a.arena.used, s + a.separate))
}

fn pair(a: &str, b: &str) {
    let seq = group(&[a, b], false);
    let alone: Vec<u64> = seq
        .models
        .iter()
        .map(|m| {
            let p = plan(m).expect("plan alone");
            p.plan.arena_usages.values().map(|x| x.used).sum()
        })
        .collect();
    let s = plan_group(&seq).expect("sequential group");
    let c = plan_group(&group(&[a, b], true)).expect("concurrent group");
    let (g_all, sep_all) = totals(&s);
    println!(
        "{a} + {b}\n  scratch alone: {} + {} = {}\n  group scratch, in turn: {} (larger alone: {}, {})\n  group scratch, concurrent: {} (sum: {}, {})\n  all arenas: group {g_all}, separate {sep_all}, saved {}",
        alone[0],
        alone[1],
        alone[0] + alone[1],
        scratch(&s),
        alone[0].max(alone[1]),
        if scratch(&s) == alone[0].max(alone[1]) {
            "equal"
        } else {
            "DIFFERENT"
        },
        scratch(&c),
        alone[0] + alone[1],
        if scratch(&c) == alone[0] + alone[1] {
            "equal"
        } else {
            "differs by alignment"
        },
        sep_all - g_all
    );
}

fn main() {
    pair("tiny_kws_dscnn_int8", "tflm_person_detect_int8");
    pair("tiny_ic_resnet8_int8", "tiny_ad01_int8");
    pair("te_mcunet_vww", "tiny_str_ww_int8");
    let four = group(
        &[
            "tiny_kws_dscnn_int8",
            "tflm_person_detect_int8",
            "tiny_ic_resnet8_int8",
            "tiny_ad01_int8",
        ],
        false,
    );
    let mut times: Vec<Duration> = Vec::new();
    let mut last = None;
    for _ in 0..11 {
        let t = Instant::now();
        last = Some(plan_group(&four).expect("group of four"));
        times.push(t.elapsed());
    }
    times.sort();
    let p = last.expect("planned");
    let (g, s) = totals(&p);
    println!(
        "group of 4 (kws, person_detect, resnet8, ad01), in turn: scratch {}, all arenas {g} (separate {s}); plan_group median {:.2} ms over 11 runs (min {:.2}, max {:.2}), imports and verification included",
        scratch(&p),
        times[5].as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        times[10].as_secs_f64() * 1e3
    );
}
