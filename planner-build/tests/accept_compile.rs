//! Accept => compile campaign: random manifests (single models and groups: random inline
//! graphs, names, memories, constraints, placement rules and concurrency sets, from a fixed
//! seed) are planned with planner-build, and every accepted one must compile under
//! `include_model!`. Accepted plans are batched into crates, one module per manifest (a file
//! `src/c<N>.rs`, so an error names its manifest), to keep rustc invocations few.
//!
//! Some manifests plan a real model (a bundled one, or the three-op `quant_chain.tflite`)
//! with random `in_place`, `row_overlap`, `patches` (auto with a recompute budget, or a
//! fixed split and grid), `patch_input` and op order (`schedule`): every accepted one must
//! also run through its generated `run()` (or `run_streamed()`) and
//! `planner_kernels::Reference` (a binary crate per batch runs them all): a bundled model on
//! its golden run's input, its output equal to TFLite Micro's (`tests/run-models/goldens`),
//! the others on zero inputs. The outside
//! audit's reproducers of plans that were accepted and then did not compile or run are
//! planned, built and run by `reproducers_plan_compile_and_run` on every `cargo test`.
//!
//! The campaign is slow, so ignored by `cargo test`; `scripts/accept_compile.sh` runs it. Settings (env):
//! `ACCEPT_COMPILE_COUNT` manifests (default 200), `ACCEPT_COMPILE_SEED` (default 29),
//! `ACCEPT_COMPILE_REAL` the percentage that plan a real model (default 20),
//! `ACCEPT_COMPILE_BATCH` modules per crate (default 250), `ACCEPT_COMPILE_DIR` the work
//! directory (default `target/accept-compile`; crates share its `target/`). Every manifest
//! that fails (a panic while planning, or a compile error) is saved under `failures/` with
//! the error, and the test fails naming them.

#[path = "../../planner/tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use common::Rng;

/// Names as users write them, and the ones that trip code generators: Rust keywords,
/// names of generated items, case and underscore twins, long names, non-ASCII, punctuation.
fn name(r: &mut Rng) -> String {
    const TRICKY: &[&str] = &[
        "take",
        "take_model",
        "init",
        "init_model",
        "arena_ptrs",
        "from_buffers",
        "buffers",
        "self",
        "Self",
        "type",
        "mod",
        "fn",
        "crate",
        "super",
        "async",
        "try",
        "union",
        "main",
        "core",
        "std",
        "planner",
        "a_and_b",
        "model",
        "handle",
        "Model",
        "Handle",
        "_",
        "_x",
        "x",
        "A",
        "a",
        "b",
        "B",
        "r#x",
        "0abc",
        "x-y",
        "x y",
        "x/y",
        "a.b",
        "É",
        "名前",
        "",
        "x*\\",
        "tensor",
        "input",
        "output",
        "PLAN_HASH",
        "MODEL",
        "Buffers",
    ];
    match r.below(10) {
        0..=5 => {
            let len = r.range(1, 9);
            let mut s = String::new();
            for k in 0..len {
                let c = if k == 0 {
                    *r.pick(b"abcdefghijklmnopqrstuvwxyz_")
                } else {
                    *r.pick(b"abcdefghijklmnopqrstuvwxyz0123456789_")
                };
                s.push(c as char);
            }
            s
        }
        6 | 7 => r.pick(TRICKY).to_string(),
        8 => {
            let len = r.range(40, 60) as usize;
            let mut s = "n".repeat(len);
            s.push(*r.pick(&['a', 'b', '1', '_']));
            s
        }
        _ => {
            let mut s = String::new();
            for _ in 0..r.range(1, 6) {
                s.push(*r.pick(&['A', 'b', 'C', '_', '9', 'z', 'Q']));
            }
            s
        }
    }
}

/// `s` as a TOML basic string: a JSON string's escapes are TOML's, for any text without
/// U+007F (which JSON leaves as it is and TOML refuses; no generated name has it).
fn toml_str(s: &str) -> String {
    assert!(!s.contains('\u{7f}'), "{s:?}");
    serde_json::to_string(s).expect("a string serializes")
}

/// Memories of a custom platform: (name, writable).
type Mems = Vec<(String, bool)>;

/// One `[model]`/`[[model]]` table's body (without the header).
fn model_body(r: &mut Rng, name: &str, mems: &Mems) -> String {
    let mut s = format!("name = {}\n", toml_str(name));
    let mut ids: Vec<String> = Vec::new();
    let fresh = |r: &mut Rng, ids: &mut Vec<String>| {
        let mut id = name_for_tensor(r);
        // Mostly distinct ids; a few repeats, which the manifest must refuse.
        if ids.contains(&id) && !r.pct(3) {
            id = format!("{id}{}", ids.len());
        }
        ids.push(id.clone());
        id
    };
    let mut tensors = Vec::new();
    let mut ops = Vec::new();
    let tensor = |r: &mut Rng, id: &str, extra: &str| {
        let (dtype, elem) = if r.pct(2) {
            ("q4", 1)
        } else {
            *r.pick(&[
                ("i8", 1),
                ("u8", 1),
                ("i16", 2),
                ("i32", 4),
                ("f32", 4),
                ("i8", 1),
                ("u8", 1),
            ])
        };
        let shape = if r.pct(1) {
            "size = \"3G\"".to_string()
        } else if r.pct(25) {
            // Mostly whole elements; now and then a size that is not, or zero.
            let n = if r.pct(3) {
                r.below(4096)
            } else {
                elem * r.range(1, 1024)
            };
            format!("size = {n}")
        } else {
            let dims: Vec<String> = (0..r.range(1, 3))
                .map(|_| r.range(1, 24).to_string())
                .collect();
            format!("shape = [{}]", dims.join(", "))
        };
        let align = if r.pct(8) {
            format!(", alignment = {}", 1u64 << r.below(7))
        } else {
            String::new()
        };
        format!(
            "  {{ id = {}, dtype = \"{dtype}\", {shape}{align}{extra} }},\n",
            toml_str(id)
        )
    };
    let mut live: Vec<String> = Vec::new();
    for _ in 0..r.range(1, 2) {
        let id = fresh(r, &mut ids);
        tensors.push(tensor(r, &id, ""));
        live.push(id);
    }
    let n_ops = r.range(1, 8);
    for _ in 0..n_ops {
        let mut inputs = vec![r.pick(&live).clone()];
        if r.pct(40) {
            inputs.push(r.pick(&live).clone());
        }
        if r.pct(30) {
            let id = fresh(r, &mut ids);
            let kind = if r.pct(85) {
                ", constant = true"
            } else {
                ", variable = true"
            };
            tensors.push(tensor(r, &id, kind));
            inputs.push(id);
        }
        let out = fresh(r, &mut ids);
        tensors.push(tensor(r, &out, ""));
        let scratch = if r.pct(15) {
            let id = fresh(r, &mut ids);
            tensors.push(tensor(r, &id, ""));
            format!(", scratch = [{}]", toml_str(&id))
        } else {
            String::new()
        };
        let opcode = r.pick(&["ADD", "RELU", "CONV_2D", "RESHAPE", "SOFTMAX", "MUL"]);
        let ins: Vec<String> = inputs.iter().map(|i| toml_str(i)).collect();
        ops.push(format!(
            "  {{ opcode = \"{opcode}\", inputs = [{}], outputs = [{}]{scratch} }},\n",
            ins.join(", "),
            toml_str(&out)
        ));
        live.push(out);
    }
    s.push_str("tensors = [\n");
    s.extend(tensors);
    s.push_str("]\nops = [\n");
    s.extend(ops);
    s.push_str("]\n");
    if r.pct(15) && !mems.is_empty() {
        let (m, _) = r.pick(mems).clone();
        let id = r.pick(&ids).clone();
        let _ = writeln!(
            s,
            "rules = [{{ id = {}, attributes = {{ memory = {} }} }}]",
            toml_str(&id),
            toml_str(&m)
        );
    }
    s
}

fn name_for_tensor(r: &mut Rng) -> String {
    if r.pct(85) {
        format!("t{}", r.below(1000))
    } else {
        name(r)
    }
}

/// The shared `[platform]` and `[memory]` tables; the custom memories for rules.
fn platform(r: &mut Rng) -> (String, Mems) {
    let mut s = String::from("[platform]\n");
    let mut mems: Mems = Vec::new();
    match r.below(10) {
        0..=4 => s.push_str("preset = \"generic\"\n"),
        5 | 6 => {
            // Every board preset (the generic one is the branch above).
            let boards: Vec<&str> = planner::manifest::Platform::PRESETS
                .iter()
                .copied()
                .filter(|&p| p != "generic")
                .collect();
            let p = r.pick(&boards);
            let _ = writeln!(s, "preset = \"{p}\"");
        }
        _ => {
            s.push_str("memories = [\n");
            let names = ["SRAM", "DTCM", "DDR", "ITCM"];
            for (k, n) in names.iter().take(r.range(1, 3) as usize).enumerate() {
                let size = if r.pct(70) {
                    format!(", size = {}", r.range(256, 1 << 20))
                } else {
                    String::new()
                };
                let origin = if r.pct(50) {
                    format!(", origin = {}", 0x2000_0000u64 + ((k as u64) << 24))
                } else {
                    String::new()
                };
                let _ = writeln!(s, "  {{ name = \"{n}\", writable = true{size}{origin} }},");
                mems.push((n.to_string(), true));
            }
            if r.pct(60) {
                s.push_str("  { name = \"FLASH\", writable = false },\n");
                mems.push(("FLASH".into(), false));
            }
            s.push_str("]\n");
        }
    }
    if r.pct(60) {
        let _ = writeln!(s, "min_alignment = {}", 1u64 << r.below(7));
    }
    s.push_str("[memory]\n");
    if r.pct(40) {
        let p = r.pick(&[
            "greedy",
            "greedy_by_size",
            "best_of_greedy",
            "tflm",
            "hill_climb",
            "optimal",
            "auto",
        ]);
        let _ = writeln!(s, "planner = \"{p}\"");
    }
    if r.pct(15) {
        s.push_str("schedule = \"memory\"\n");
    }
    let writable: Vec<&(String, bool)> = mems.iter().filter(|m| m.1).collect();
    if !writable.is_empty() && r.pct(50) {
        s.push_str("constraints = [\n");
        for (m, _) in writable
            .iter()
            .take(r.range(1, writable.len() as u64) as usize)
        {
            let max = if r.pct(50) {
                format!(", max_size = {}", r.range(64, 1 << 16))
            } else {
                String::new()
            };
            let align = if r.pct(40) {
                format!(", arena_alignment = {}", 1u64 << r.below(8))
            } else {
                String::new()
            };
            let app = if r.pct(10) { ", app_bound = true" } else { "" };
            let _ = writeln!(s, "  {{ name = \"{m}\"{max}{align}{app} }},");
        }
        s.push_str("]\n");
    }
    if mems.iter().any(|m| !m.1) && r.pct(50) {
        s.push_str("tensors = [{ type = \"constant\", attributes = { memory = \"FLASH\" } }]\n");
    }
    if r.pct(30) {
        // The op order is drawn above.
        s.push_str(&memory_options(r, false));
    }
    (s, mems)
}

/// The models a run manifest plans: every bundled model, and the three-op QUANTIZE f32 ->
/// i8, RELU, DEQUANTIZE chain on `[1, 16, 16, 8]` (a float32 input inside a patch stage).
fn run_models() -> Vec<PathBuf> {
    let mut models = common::bundled_models(&root());
    models.push(root().join("planner/tests/data/repro/turn4/quant_chain.tflite"));
    models
}

/// `[memory]` lines for in place (all kinds or a list), row overlap, patches, the patch input
/// and (with `schedule`) op order: each combination comes up.
fn memory_options(r: &mut Rng, schedule: bool) -> String {
    let mut s = String::new();
    if r.pct(50) {
        s.push_str("in_place = true\n");
    }
    if r.pct(30) {
        s.push_str("row_overlap = true\n");
    }
    if r.pct(20) {
        // An allow-list of the in-place pass (alone, or narrowing `in_place`).
        let kinds = [
            "ADD",
            "MUL",
            "RELU",
            "QUANTIZE",
            "DEPTHWISE_CONV_2D",
            "LOGISTIC",
        ];
        let _ = writeln!(
            s,
            "in_place_ops = [\"{}\", \"{}\"]",
            r.pick(&kinds),
            r.pick(&kinds)
        );
    }
    if schedule && r.pct(25) {
        s.push_str("schedule = \"memory\"\n");
    }
    let streamed = r.pct(40);
    match r.below(10) {
        0..=3 => {
            s.push_str("patches = \"auto\"\n");
            if r.pct(50) {
                let _ = writeln!(
                    s,
                    "max_recompute = {}",
                    r.pick(&["0.0", "0.1", "0.5", "2.0"])
                );
            }
            if streamed {
                s.push_str("patch_input = \"streamed\"\n");
            }
        }
        4..=6 => {
            let input = if streamed { "streamed" } else { "resident" };
            let _ = writeln!(
                s,
                "patches = {{ split = {}, grid = [{}, {}], input = \"{input}\" }}",
                r.below(14),
                r.range(1, 4),
                r.range(1, 4)
            );
        }
        _ => {}
    }
    s
}

/// A manifest that plans a real model with random memory options; its plan is run too.
fn run_manifest(r: &mut Rng) -> String {
    let models = run_models();
    let model = r.pick(&models).display().to_string();
    let mut s = format!(
        "[model]\nname = \"m\"\nsource = {}\n[platform]\npreset = \"generic\"\n[memory]\n",
        toml_str(&model)
    );
    if r.pct(30) {
        let p = r.pick(&["greedy", "greedy_by_size", "tflm", "auto"]);
        let _ = writeln!(s, "planner = \"{p}\"");
    }
    s.push_str(&memory_options(r, true));
    s
}

/// True for a manifest of [`run_manifest`]: its plan runs with the reference kernels.
fn runs(text: &str) -> bool {
    text.starts_with("[model]\nname = \"m\"\nsource = ")
}

/// One random manifest: a single model, or a group of one to four models; `real` percent
/// of them (one in five by default) plan a real model with random memory options
/// ([`run_manifest`]).
fn manifest(r: &mut Rng, real: u64) -> String {
    if r.pct(real) {
        return run_manifest(r);
    }
    let (plat, mems) = platform(r);
    if r.pct(65) {
        let n = name(r);
        let body = model_body(r, &n, &mems);
        return format!("[model]\n{body}{plat}");
    }
    let n = r.range(1, 4);
    let names: Vec<String> = (0..n).map(|_| name(r)).collect();
    let mut s = String::from("[group]\n");
    if r.pct(80) {
        let _ = writeln!(s, "name = {}", toml_str(&name(r)));
    }
    let mut sets = Vec::new();
    for _ in 0..r.below(3) {
        let least = if r.pct(5) { 1 } else { 2 };
        let members: Vec<String> = (0..r.range(least, 3))
            .map(|_| {
                if r.pct(5) {
                    toml_str("nobody")
                } else {
                    toml_str(&r.pick(&names).clone())
                }
            })
            .collect();
        sets.push(format!("[{}]", members.join(", ")));
    }
    let _ = writeln!(s, "concurrent = [{}]\n", sets.join(", "));
    for nm in &names {
        let _ = writeln!(s, "[[model]]\n{}", model_body(r, nm, &mems));
    }
    s.push_str(&plat);
    s
}

fn env_u64(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn root() -> PathBuf {
    common::root().canonicalize().unwrap()
}

#[test]
fn generator_is_deterministic() {
    let a: Vec<String> = (0..20)
        .map({
            let mut r = Rng::new(7);
            move |_| manifest(&mut r, 20)
        })
        .collect();
    let mut r = Rng::new(7);
    for m in &a {
        assert_eq!(m, &manifest(&mut r, 20));
    }
}

#[test]
#[ignore = "slow: scripts/accept_compile.sh runs it"]
fn accepted_manifests_compile() {
    let count = env_u64("ACCEPT_COMPILE_COUNT", 200);
    let seed = env_u64("ACCEPT_COMPILE_SEED", 29);
    let batch = env_u64("ACCEPT_COMPILE_BATCH", 250).max(1);
    let real_pct = env_u64("ACCEPT_COMPILE_REAL", 20).min(100);
    let work = std::env::var_os("ACCEPT_COMPILE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/accept-compile"));
    let _ = std::fs::remove_dir_all(work.join("manifests"));
    let _ = std::fs::remove_dir_all(work.join("failures"));
    for d in ["manifests", "failures", "plans"] {
        std::fs::create_dir_all(work.join(d)).unwrap();
    }
    let start = Instant::now();
    let mut r = Rng::new(seed);
    let mut accepted: Vec<Accepted> = Vec::new();
    let mut refused: BTreeMap<String, u64> = BTreeMap::new();
    let mut failures: Vec<String> = Vec::new();
    let (mut groups, mut real) = (0u64, 0u64);
    for i in 0..count {
        let text = manifest(&mut r, real_pct);
        groups += u64::from(text.starts_with("[group]"));
        real += u64::from(runs(&text));
        let path = work.join(format!("manifests/c{i}.toml"));
        std::fs::write(&path, &text).unwrap();
        match plan(&work, i, &path, runs(&text)) {
            Ok(a) => accepted.push(a),
            Err(Some(m)) => {
                // Tally refusals by their first words, to see what the generator exercises.
                let key: String = m
                    .split_whitespace()
                    .filter(|w| !w.contains('/') && !w.contains('"') && !w.contains('`'))
                    .take(4)
                    .collect::<Vec<_>>()
                    .join(" ");
                *refused.entry(key).or_default() += 1;
            }
            Err(None) => {
                save_failure(
                    &work,
                    i,
                    &text,
                    "planner-build panicked (see the test output)",
                );
                failures.push(format!("c{i}: planner-build panicked"));
            }
        }
    }
    let planned_at = start.elapsed();
    let mut compiled = 0u64;
    let mut ran = 0u64;
    let (to_run, to_build): (Vec<Accepted>, Vec<Accepted>) =
        accepted.iter().cloned().partition(|a| a.run.is_some());
    for (k, chunk) in to_build.chunks(batch as usize).enumerate() {
        let (ok, bad) = compile_batch(&work, &format!("crate{k}"), chunk);
        compiled += ok;
        note_failures(&work, bad, &mut failures);
    }
    let mut compared = 0u64;
    for (k, chunk) in to_run.chunks(batch as usize).enumerate() {
        let (ok, bad) = compile_batch(&work, &format!("run{k}"), chunk);
        compiled += ok;
        ran += ok;
        compared += chunk
            .iter()
            .filter(|a| a.run.as_ref().is_some_and(|r| r.golden.is_some()))
            .filter(|a| !bad.iter().any(|(i, _)| *i == a.i))
            .count() as u64;
        note_failures(&work, bad, &mut failures);
    }
    let took = start.elapsed();
    eprintln!(
        "accept => compile: seed {seed}: {count} generated ({groups} groups, {} real models), {} accepted, {compiled} compiled ({ran} of them also ran, {compared} with outputs equal to TFLite Micro's), {} failed; planning {:.1} s, total {:.1} s",
        real,
        accepted.len(),
        failures.len(),
        planned_at.as_secs_f64(),
        took.as_secs_f64()
    );
    let mut top: Vec<(&String, &u64)> = refused.iter().collect();
    top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (k, n) in top.iter().take(12) {
        eprintln!("  refused {n:>4}: {k} ...");
    }
    assert!(
        failures.is_empty(),
        "{} accepted manifests failed (saved in {}):\n{}",
        failures.len(),
        work.join("failures").display(),
        failures.join("\n")
    );
}

/// The outside audit's reproducers of plans that were accepted and then did not compile or
/// run (`planner/tests/data/repro/turn4`): a QUANTIZE f32 -> i8 run in place inside a
/// streamed patch stage (`qc_ip_stream`, and te_mcunet_vww's "auto + in place, streamed"
/// plan, `vww_ip_stream`: `include_model!` refused them), an in-place ADD inside
/// tiny_ic_resnet8's patch stage (`r8_0.5`: `run()` failed with `KernelError::Region`) and
/// a float32 CONV_2D planned with `patches = "auto"` (a fixed split over it, which compiled
/// and then failed at run time, is now refused when planning). Each is
/// planned, built under `include_model!` and run with the reference kernels.
#[test]
fn reproducers_plan_compile_and_run() {
    let dir = root().join("planner/tests/data/repro/turn4");
    let work = root().join("target/accept-compile-repro");
    for d in ["manifests", "plans"] {
        std::fs::create_dir_all(work.join(d)).unwrap();
    }
    let float = std::fs::read_to_string(dir.join("float_patches.toml")).unwrap();
    let fixed = "patches = { split = 0, grid = [2, 2] }";
    assert!(float.contains(fixed));
    let float_auto = work.join("manifests/float_auto.toml");
    // Written elsewhere: its model's path made absolute.
    let text = float.replace(fixed, "patches = \"auto\"").replace(
        "source = \"../../../../../",
        &format!("source = \"{}/", root().display()),
    );
    std::fs::write(&float_auto, text).unwrap();
    let mut accepted = Vec::new();
    let manifests = [
        dir.join("qc_ip_stream.toml"),
        dir.join("vww_ip_stream.toml"),
        dir.join("r8_0.5.toml"),
        float_auto,
    ];
    for (i, m) in manifests.iter().enumerate() {
        match plan(&work, i as u64, m, true) {
            Ok(a) => accepted.push(a),
            Err(e) => panic!("{} is refused: {e:?}", m.display()),
        }
    }
    // te_mcunet_vww and tiny_ic_resnet8 have golden runs: their outputs are compared with
    // TFLite Micro's.
    let golden: Vec<u64> = accepted
        .iter()
        .filter(|a| a.run.as_ref().is_some_and(|r| r.golden.is_some()))
        .map(|a| a.i)
        .collect();
    assert_eq!(golden, [1, 2]);
    let (ran, bad) = compile_batch(&work, "repro", &accepted);
    assert!(bad.is_empty(), "{bad:#?}");
    assert_eq!(ran, 4);
    // The fixed split over float32 ops is refused when planning, naming the op.
    let e = plan(&work, 9, &dir.join("float_patches.toml"), false).unwrap_err();
    let e = e.unwrap_or_default();
    common::assert_says(
        &e,
        &[
            "op 0 (CONV_2D) of model `fp`",
            "cannot run on patch regions: its output is f32",
        ],
    );
}

/// An accepted manifest: its number, its plan file, and for a model that runs, what the
/// runner needs.
#[derive(Clone, Debug)]
struct Accepted {
    i: u64,
    plan: PathBuf,
    run: Option<RunSpec>,
}

/// How a runner calls a model: its module (from the model's name), whether its input is
/// streamed (`run_streamed`) or resident (`run`), and TFLite Micro's output for the model
/// when `tests/run-models/goldens` has it.
#[derive(Clone, Debug)]
struct RunSpec {
    module: String,
    streamed: bool,
    golden: Option<Golden>,
}

/// A bundled model's golden run (`tests/run-models/goldens/<stem>.json`, written by
/// `scripts/tflm_goldens.py` with TFLite Micro's reference kernels): the seeded input the
/// runner fills, as `planner_kernels::golden` makes it, and the digests of that input and of
/// TFLite Micro's output. The runner fills the input, checks its digest, runs the plan and
/// compares the output's digest.
#[derive(Clone, Debug)]
struct Golden {
    /// The model's input and output accessors' names.
    input: String,
    output: String,
    /// The input's element type, the `golden` fill call's name and extra arguments.
    elem: &'static str,
    fill: &'static str,
    /// The input's `[H, W, C]` (for cutting a streamed input's regions) and element count.
    hwc: [usize; 3],
    count: usize,
    seed: u64,
    input_digest: u64,
    output_digest: u64,
}

/// The golden run of the model `source` names (by its file stem) for `file`'s plan of it:
/// `None` when there is none, or when the plan's inputs and outputs are not the golden's
/// one input and one output of the same shape.
fn golden(source: &str, file: &planner::planfile::PlanFile) -> Option<Golden> {
    let stem = Path::new(source).file_stem()?.to_str()?;
    let path = root().join(format!("tests/run-models/goldens/{stem}.json"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    let ([gi], [go], [pi], [po]) = (
        json["inputs"].as_array()?.as_slice(),
        json["outputs"].as_array()?.as_slice(),
        file.inputs.as_slice(),
        file.outputs.as_slice(),
    ) else {
        return None;
    };
    let shape = |v: &serde_json::Value| -> Option<Vec<u64>> {
        v["shape"].as_array()?.iter().map(|d| d.as_u64()).collect()
    };
    let (in_shape, out_shape) = (shape(gi)?, shape(go)?);
    let planned = |t: u32| file.tensors.get(t as usize).map(|t| t.shape.clone());
    if planned(pi.tensor)? != in_shape || planned(po.tensor)? != out_shape {
        return None;
    }
    let (elem, fill) = match gi["dtype"].as_str()? {
        "int8" => ("i8", "fill_i8(&mut whole, SEED)"),
        "int16" => ("i16", "fill_i16(&mut whole, SEED)"),
        "float32" => ("f32", "fill_f32(&mut whole, SEED, 0.0, 1.0)"),
        _ => return None,
    };
    let hex = go["hex"].as_str()?;
    let out: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    let hwc = match in_shape.as_slice() {
        [_, h, w, c] => [*h as usize, *w as usize, *c as usize],
        _ => [0, 0, 0],
    };
    let ident = |io: &[planner::planfile::IoEntry]| {
        planner::planfile::naming::unique_idents(io.iter().map(|i| i.name.as_str())).remove(0)
    };
    Some(Golden {
        input: ident(&file.inputs),
        output: ident(&file.outputs),
        elem,
        fill,
        hwc,
        count: in_shape.iter().product::<u64>() as usize,
        seed: gi["seed"].as_u64()?,
        input_digest: u64::from_str_radix(gi["fnv1a64"].as_str()?, 16).ok()?,
        output_digest: planner_kernels::golden::fnv1a64(out?),
    })
}

/// The model file a manifest's `source = "..."` line names.
fn source_of(manifest: &str) -> Option<String> {
    let line = manifest.lines().find(|l| l.starts_with("source = "))?;
    Some(
        line.strip_prefix("source = ")?
            .trim_matches('"')
            .to_string(),
    )
}

/// Plans manifest `path` (number `i`) into `work/plans/c<i>`: the plan, or the refusal's
/// message (`None` when planner-build panicked). With `run`, the plan's model is to be run.
fn plan(work: &Path, i: u64, path: &Path, run: bool) -> Result<Accepted, Option<String>> {
    let out = work.join(format!("plans/c{i}"));
    let _ = std::fs::remove_dir_all(&out);
    let result = std::panic::catch_unwind(|| {
        planner_build::Builder::new()
            .manifest(path)
            .out_dir(&out)
            .cargo_directives(false)
            .place_in_regions(false)
            .try_compile()
    });
    let outputs = match result {
        Ok(Ok(outputs)) => outputs,
        Ok(Err(e)) => return Err(Some(e.message().to_string())),
        Err(_) => return Err(None),
    };
    let plan = outputs
        .files
        .keys()
        .find(|f| f.to_string_lossy().ends_with(".plan.json"))
        .cloned()
        .expect("a plan file is written");
    let run = run.then(|| {
        let text = std::fs::read_to_string(&plan).unwrap();
        let file = planner::planfile::PlanFile::parse(&text, "accepted").unwrap();
        let manifest = std::fs::read_to_string(path).unwrap();
        RunSpec {
            module: planner::planfile::naming::model_module(&file.model),
            streamed: file
                .patches
                .as_ref()
                .is_some_and(|p| p.input == planner::planfile::patch::PatchInput::Streamed),
            golden: source_of(&manifest).and_then(|s| golden(&s, &file)),
        }
    });
    Ok(Accepted { i, plan, run })
}

/// Saves each failed manifest of `bad` and adds a line for it to `failures`.
fn note_failures(work: &Path, bad: Vec<(u64, String)>, failures: &mut Vec<String>) {
    for (i, err) in bad {
        let text = std::fs::read_to_string(work.join(format!("manifests/c{i}.toml"))).unwrap();
        save_failure(work, i, &text, &err);
        let first = err.lines().next().unwrap_or("").to_string();
        failures.push(format!("c{i}: {first}"));
    }
}

fn save_failure(work: &Path, i: u64, text: &str, err: &str) {
    let dir = work.join("failures");
    std::fs::write(dir.join(format!("c{i}.toml")), text).unwrap();
    std::fs::write(dir.join(format!("c{i}.err")), err).unwrap();
}

/// Builds crate `name` with one module per accepted plan (and runs its models when they are
/// to be run); returns how many compiled (and ran) and the errors of those that did not (by
/// manifest number). rustc may stop before checking every module once some fail, so the
/// failing ones are taken out and the rest built again until the crate builds.
fn compile_batch(work: &Path, name: &str, chunk: &[Accepted]) -> (u64, Vec<(u64, String)>) {
    let mut left: Vec<Accepted> = chunk.to_vec();
    let mut failed: Vec<(u64, String)> = Vec::new();
    loop {
        let bad = build_crate(work, name, &left);
        if bad.is_empty() {
            return (left.len() as u64, failed);
        }
        left.retain(|a| !bad.contains_key(&a.i));
        failed.extend(bad);
    }
}

/// The target directory every generated crate builds in (the campaign's and the
/// reproducers' alike), so the planner and kernel crates they depend on build once.
fn build_target() -> PathBuf {
    root().join("target/accept-compile-build")
}

/// The `run()` of a module whose plan is to be run: with zero inputs, or, for a model with a
/// golden run, with the golden's input, its output compared with TFLite Micro's.
fn runner(spec: &RunSpec) -> String {
    let m = &spec.module;
    let take = format!(
        "    let mut m = {m}::Model::take().ok_or_else(|| String::from(\"taken twice\"))?.init();\n"
    );
    let Some(g) = &spec.golden else {
        let call = if spec.streamed {
            "run_streamed(&mut planner_kernels::Reference, |_, _| {})"
        } else {
            "run(&mut planner_kernels::Reference)"
        };
        return format!(
            "\npub fn run() -> Result<(), String> {{\n{take}    m.{call}.map_err(|e| format!(\"{{e:?}}\"))\n}}\n"
        );
    };
    let (elem, fill, count, seed) = (g.elem, g.fill, g.count, g.seed);
    let ([_, w, c], input, output) = (g.hwc, &g.input, &g.output);
    let (din, dout) = (g.input_digest, g.output_digest);
    // A streamed input is cut from the whole one, region by region (rows of `width · C`).
    let call = if spec.streamed {
        format!(
            "run_streamed(&mut planner_kernels::Reference, |r, buf| {{\n        \
             let n = r.width * {c};\n        \
             for y in 0..r.height {{\n            \
             let at = ((r.top + y) * {w} + r.left) * {c};\n            \
             buf[y * n..(y + 1) * n].copy_from_slice(&whole[at..at + n]);\n        \
             }}\n    }})"
        )
    } else {
        format!(
            "input_{input}_mut().copy_from_slice(&whole);\n    m.run(&mut planner_kernels::Reference)"
        )
    };
    format!(
        "\n/// The seed of the input of TFLite Micro's golden run.\n\
         const SEED: u64 = {seed};\n\
         pub fn run() -> Result<(), String> {{\n{take}    \
         let mut whole = vec![0 as {elem}; {count}];\n    \
         planner_kernels::golden::{fill};\n    \
         let seen = planner_kernels::golden::digest(&planner::rt::kernel::Data::from(&whole[..]));\n    \
         if seen != Some({din:#x}) {{\n        \
         return Err(format!(\"the golden's input digest is {din:#x}, this one {{seen:x?}}\"));\n    \
         }}\n    \
         m.{call}.map_err(|e| format!(\"{{e:?}}\"))?;\n    \
         let got = planner_kernels::golden::digest(&planner::rt::kernel::Data::from(m.output_{output}()));\n    \
         if got != Some({dout:#x}) {{\n        \
         return Err(format!(\"output digest {{got:x?}}, TFLite Micro's {dout:#x}\"));\n    \
         }}\n    \
         Ok(())\n}}\n"
    )
}

/// Builds one crate of `plans` (a binary that runs each model when the plans are to be run,
/// a library otherwise): the errors per manifest number, at compile or run time (empty when
/// it builds and every model runs).
fn build_crate(work: &Path, name: &str, plans: &[Accepted]) -> BTreeMap<u64, String> {
    let dir = work.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let root = root();
    let runs = plans.iter().any(|a| a.run.is_some());
    // The kernels optimised: the models run in a debug build of the generated code. Every
    // crate has the same profile, so the dependencies they share build once.
    let kernels = if runs {
        format!(
            "planner-kernels = {{ path = {:?} }}\n",
            root.join("planner-kernels")
        )
    } else {
        String::new()
    };
    let profile = "\n[profile.dev.package.\"*\"]\nopt-level = 2\n";
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"accept_compile_{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\nplanner = {{ path = {:?}, default-features = false }}\nplanner-macros = {{ path = {:?} }}\n{kernels}{profile}\n[workspace]\n",
            root.join("planner"),
            root.join("planner-macros")
        ),
    )
    .unwrap();
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let mut top = String::from("//! @generated by the accept => compile campaign.\n");
    if !runs {
        top.push_str("#![no_std]\n");
    }
    top.push_str("#![allow(warnings)]\n");
    let mut table = String::new();
    for a in plans {
        let i = a.i;
        let _ = writeln!(top, "pub mod c{i};");
        let mut module = format!(
            "planner_macros::include_model!({:?});\n",
            a.plan.display().to_string()
        );
        if let Some(spec) = &a.run {
            module.push_str(&runner(spec));
            let _ = writeln!(table, "    (\"c{i}\", c{i}::run),");
        }
        std::fs::write(dir.join(format!("src/c{i}.rs")), module).unwrap();
    }
    let file = if runs {
        let _ = write!(
            top,
            "\nfn main() {{\n    let runs: &[(&str, fn() -> Result<(), String>)] = &[\n{table}    ];\n    for (name, run) in runs {{\n        match std::panic::catch_unwind(*run) {{\n            Ok(Ok(())) => println!(\"ran {{name}}\"),\n            Ok(Err(e)) => println!(\"failed {{name}}: {{e}}\"),\n            Err(_) => println!(\"failed {{name}}: panicked\"),\n        }}\n    }}\n}}\n"
        );
        "src/main.rs"
    } else {
        "src/lib.rs"
    };
    std::fs::write(dir.join(file), top).unwrap();
    let out = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--offline", "--quiet", "--message-format=short"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", build_target())
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    let mut bad: BTreeMap<u64, String> = BTreeMap::new();
    let number = |s: &str| s.strip_prefix('c').and_then(|n| n.parse::<u64>().ok());
    if out.status.success() && runs {
        let exe = build_target().join(format!("debug/accept_compile_{name}"));
        let run = std::process::Command::new(&exe)
            .output()
            .expect("the runner starts");
        let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
        // Each model that ran says so; one that failed, or that a crash kept from saying
        // anything, is a failure.
        for a in plans.iter().filter(|a| a.run.is_some()) {
            let ran = format!("ran c{}", a.i);
            if !stdout.lines().any(|l| l == ran) {
                let failed = format!("failed c{}:", a.i);
                let said = stdout.lines().find(|l| l.starts_with(&failed));
                let crash = format!("did not finish its run ({})", run.status);
                let err = said.unwrap_or(&crash);
                bad.insert(a.i, format!("accepted and compiled, but run(): {err}\n"));
            }
        }
        return bad;
    }
    if out.status.success() {
        return bad;
    }
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    // Short messages start with `src/c<N>.rs:line:col: error...`.
    for line in stderr.lines() {
        if let Some(rest) = line.strip_prefix("src/")
            && let Some((n, _)) = rest.split_once(".rs:")
            && let Some(n) = number(n)
            && line.contains("error")
        {
            bad.entry(n).or_default().push_str(&format!("{line}\n"));
        }
    }
    if bad.is_empty() {
        // An error that names no module: every module of the crate is suspect.
        for a in plans {
            bad.insert(a.i, stderr.clone());
        }
    }
    bad
}
