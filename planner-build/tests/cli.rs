//! The `planner` command end to end: exit codes, outputs that parse, errors with positions.

#[path = "../../planner/tests/common/mod.rs"]
mod common;
#[path = "support/files.rs"]
mod files;
#[path = "support/cli.rs"]
mod support;

use std::path::Path;
use std::process::Command;

use common::assert_says;
use files::{fresh_dir, model_toml};
use support::{exit_code, json, planner, refused, root, stdout_of, text, tmp};

/// A group manifest of two models, relative to the workspace root the commands run in.
const PAIR: &str = "tests/ui/plans/pair.toml";

#[test]
fn plans_a_real_model_as_table_and_json() {
    let table = stdout_of(&["plan", "models/tiny_kws_dscnn_int8.tflite"]);
    assert_says(&table, &["model tiny_kws_dscnn_int8", "lower bound"]);
    let v = json(&[
        "plan",
        "models/tiny_kws_dscnn_int8.tflite",
        "--format",
        "json",
    ]);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    for k in [
        "format_version",
        "model",
        "planner",
        "tensor_allocs",
        "arena_usages",
        "persistent_arenas",
        "constant_arenas",
        "tensor_lifetimes",
    ] {
        assert!(keys.contains(&k), "missing {k} in {keys:?}");
    }
    let scratch = &v["arena_usages"]["SRAM"];
    assert_eq!(scratch["role"], "scratch");
    assert!(scratch["used"].as_u64().unwrap() >= 16000);
    let t0 = &v["tensor_allocs"]["0"];
    assert_eq!(t0["tensor_id"], "0");
    assert_eq!(t0["binding"]["memory"], t0["memory"]);
}

#[test]
fn example_manifest_plans_with_each_planner() {
    for p in ["greedy", "greedy_by_size", "hill_climb"] {
        let v = json(&[
            "plan",
            "examples/inline/kws.toml",
            "--planner",
            p,
            "--format",
            "json",
        ]);
        assert_eq!(v["planner"], p);
        assert_eq!(v["constant_arenas"]["DTCM"]["source_memory"], "FLASH");
    }
}

#[test]
fn explain_says_why() {
    let s = stdout_of(&[
        "explain",
        "examples/inline/kws.toml",
        "--tensor",
        "fc/weights",
    ]);
    assert_eq!(s.lines().count(), 1, "{s}");
    assert!(
        s.starts_with("fc/weights fc/weights: constant/DTCM<-FLASH @"),
        "{s}"
    );
    assert_says(&s, &["— staged FLASH -> DTCM by memory.tensors[1]"]);
    assert_eq!(
        exit_code(&["explain", "examples/inline/kws.toml", "--tensor", "nope"]),
        Some(2)
    );
    // A tensor the optimized kernel set's preparation added is the plan's like any other.
    let s = stdout_of(&[
        "explain",
        "examples/kws/optimized.toml",
        "--tensor",
        "33/requant",
    ]);
    assert!(
        s.starts_with("33/requant functional_1/dense/BiasAdd/requant: constant/DTCM<-FLASH @"),
        "{s}"
    );
}

#[test]
fn bad_manifest_exits_2_with_position() {
    let p = tmp(
        "bad.toml",
        "[model]\nname = \"m\"\nsource = \"x.tflite\"\n[memory]\nplannr = \"greedy\"\n",
    );
    assert_says(
        &refused(&["plan", p.to_str().unwrap()]),
        &[
            "unknown field `plannr`",
            "bad.toml:5:1",
            "did you mean `planner`?",
        ],
    );
    let kws = "models/tiny_kws_dscnn_int8.tflite";
    let e = refused(&["plan", kws, "--planner", "gredy"]);
    assert_says(&e, &["did you mean `greedy`?"]);
    assert_eq!(exit_code(&["frobnicate"]), Some(2));
}

#[test]
fn model_that_does_not_fit_exits_1() {
    let p = tmp(
        "small.toml",
        &model_toml(
            "kws",
            "tiny_kws_dscnn_int8.tflite",
            "[platform]\npreset = \"mps3-an547\"\n[memory]\nconstraints = [{ name = \"DTCM\", max_size = \"8K\" }]\n",
        ),
    );
    let out = planner(&["plan", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let e = text(&out.stderr);
    assert_says(
        &e,
        &["memory DTCM is full: tensor", "raise the max_size of DTCM"],
    );
    // It names the constraint's line and column, and what the bank would need.
    assert_says(
        &e,
        &[
            "small.toml:7:44",
            "the max_size of DTCM: 8192 bytes set here",
            "must stay in DTCM need at least",
        ],
    );
}

#[test]
fn compare_lists_every_planner() {
    let s = stdout_of(&["compare", "models/tflm_person_detect_int8.tflite"]);
    for p in ["greedy ", "greedy_by_size", "hill_climb"] {
        assert!(s.contains(p), "{s}");
    }
    assert!(s.contains("55296"), "{s}");
}

#[test]
fn imported_starter_manifest_plans_as_is() {
    let model = root().join("models/tflm_micro_speech_lstm.tflite");
    let manifest = tmp("starter.toml", "");
    let out = planner(&[
        "import",
        model.to_str().unwrap(),
        "-o",
        manifest.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = planner(&["plan", manifest.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("persistent"));
}

#[test]
fn csv_problems_round_trip_with_capacity_exit_codes() {
    let rows = stdout_of(&["plan", "bench/examples/input.12.csv", "--format", "csv"]);
    assert!(rows.starts_with("id,lower,upper,size,offset\n"), "{rows}");
    assert_eq!(rows.lines().count(), 6);
    // The output is itself a valid problem with every offset fixed, and plans as it is.
    let fixed = tmp("fixed.csv", &rows);
    let again = planner(&["plan", fixed.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(text(&again.stdout), rows);
    // Fits at the capacity in the file name; provably not one byte lower.
    let out = planner(&["plan", "bench/examples/input.12.csv", "--capacity", "12"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = planner(&["plan", "bench/examples/input.12.csv", "--capacity", "11"]);
    assert_eq!(out.status.code(), Some(1));
    let e = text(&out.stderr);
    assert_says(
        &e,
        &["does not fit below 11 bytes", "the best height found is 12"],
    );
    // Fixed offsets are honoured.
    let pinned = tmp(
        "pinned.csv",
        "id,lower,upper,size,offset\na,0,2,4,8\nb,1,3,4,\n",
    );
    let out = planner(&["plan", pinned.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "id,lower,upper,size,offset\na,0,2,4,8\nb,1,3,4,0\n"
    );
    // A bad row is rejected with its position.
    let bad = tmp("bad.csv", "id,lower,upper,size\na,0,2,4\nb,3,1,4\n");
    assert_says(&refused(&["plan", bad.to_str().unwrap()]), &["bad.csv:3:"]);
}

/// `compare` on a CSV problem stops its searches at `--time-limit` (20 s by default), and a
/// row whose search was cut says so, as does one not run for lack of time; `none` runs each
/// to its own budget.
#[test]
fn compare_cuts_its_searches_at_its_time_limit() {
    let csv = "bench/challenging/K.1048576.csv";
    let height = |table: &str, name: &str| -> (u64, bool) {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} row: {table}"));
        let used = row.split_whitespace().nth(2).unwrap().parse().unwrap();
        (used, row.ends_with("(cut)"))
    };
    let full = stdout_of(&["compare", csv, "--time-limit", "none"]);
    assert!(!full.contains("(cut)"), "{full}");
    let (by_size, _) = height(&full, "greedy_by_size");
    // The searches lower greedy_by_size's height here, so a cut has something to take away.
    let (best_of, _) = height(&full, "best_of_greedy");
    assert!(best_of < by_size, "{full}");
    let cut = stdout_of(&["compare", csv, "--time-limit", "0ms"]);
    for name in ["greedy", "tflm"] {
        assert_eq!(
            height(&cut, name),
            (height(&full, name).0, false),
            "{name}: {cut}"
        );
    }
    // Out of time before the chain: its four planners are not run.
    for name in ["greedy_by_size", "best_of_greedy", "hill_climb", "optimal"] {
        let row = cut
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap();
        assert!(
            row.contains("not run: too little of the time limit was left"),
            "{row}"
        );
    }
    // `auto` always runs: out of time before any search began, it keeps its first pass
    // (greedy_by_size's packing) and says it was cut.
    assert_eq!(height(&cut, "auto"), (by_size, true), "{cut}");
    assert_says(
        &cut,
        &[
            "(cut): the search stopped at its share of compare's time limit",
            "not run: greedy_by_size, best_of_greedy, hill_climb, optimal would have started",
        ],
    );
    assert_says(
        &refused(&["compare", csv, "--time-limit", "soon"]),
        &["--time-limit \"soon\" is not a duration"],
    );
    assert_says(
        &refused(&[
            "compare",
            "models/tiny_kws_dscnn_int8.tflite",
            "--time-limit",
            "1s",
        ]),
        &["--time-limit is for CSV problems"],
    );
}

/// `explain`, `compare` and `plan --format svg` take a CSV problem on its own items, as `plan`
/// does: explain says where each buffer went, compare lists every planner against the bound
/// and, given a capacity, which planners fit under it, and the picture marks bound and peak.
#[test]
fn csv_problems_explain_compare_and_draw() {
    let csv = "bench/examples/input.12.csv";
    let e = stdout_of(&["explain", csv]);
    assert_eq!(e.lines().count(), 5, "{e}");
    assert_says(
        &e,
        &[
            "b5 b5: scratch/MEM @8 +4",
            "live over steps 0..21 (upper exclusive)",
        ],
    );
    let c = stdout_of(&["compare", csv, "--capacity", "12"]);
    assert_says(
        &c,
        &[
            "problem input_12 · 5 buffers · 21 steps",
            "capacity 12: under it greedy,",
        ],
    );
    for name in ["greedy", "tflm", "hill_climb", "optimal", "auto"] {
        assert!(
            c.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{name}: {c}"
        );
    }
    // TFLM's planner needs 48 bytes here: it is not among those under 12.
    let fits = c.lines().find(|l| l.starts_with("capacity 12:")).unwrap();
    assert!(!fits.contains("tflm"), "{fits}");
    let c = stdout_of(&["compare", csv, "--capacity", "11"]);
    assert_says(
        &c,
        &["capacity 11: under the lower bound 12", "no packing fits"],
    );
    let svg = stdout_of(&["plan", csv, "--format", "svg"]);
    for class in ["class=\"lower-bound\"", "class=\"peak\""] {
        assert_eq!(svg.matches(class).count(), 1, "{class}");
    }
    assert_eq!(svg.matches("class=\"tensor").count(), 5);
    assert_eq!(
        exit_code(&[
            "plan",
            "models/tiny_kws_dscnn_int8.tflite",
            "--capacity",
            "1K",
        ]),
        Some(2)
    );
}

#[test]
fn bundled_csv_instances_plan_and_verify() {
    for f in [
        "tflm_person_detection",
        "tvm_usmp_simple",
        "tvm_usmp_five",
        "tvm_usmp_alloc_max",
        "tvm_usmp_deep_speech",
    ] {
        let v = json(&["plan", &format!("bench/small/{f}.csv"), "--format", "json"]);
        assert!(v["arena_usages"]["MEM"]["used"].as_u64().unwrap() > 0);
    }
}

/// True when `actual` is `shown` with each `...` line of `shown` standing for any number of
/// lines (the README's documented abridgement).
fn matches_abridged(shown: &[&str], actual: &[&str]) -> bool {
    match shown.split_first() {
        None => actual.is_empty(),
        Some((&"...", rest)) => (0..=actual.len()).any(|k| matches_abridged(rest, &actual[k..])),
        Some((line, rest)) => actual.first() == Some(line) && matches_abridged(rest, &actual[1..]),
    }
}

#[test]
fn readme_first_output_is_the_first_commands_output() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    // The first shell block's first command, and the first text block after it.
    let sh = readme.split("```sh\n").nth(1).expect("a sh block");
    let command = sh
        .lines()
        .find(|l| l.starts_with("cargo run"))
        .expect("a cargo run line");
    let args: Vec<&str> = command
        .split(" -- ")
        .nth(1)
        .expect("arguments after --")
        .split_whitespace()
        .collect();
    assert_eq!(
        command,
        "cargo run -p planner-build --features cli --bin planner -- plan examples/kws/kws.toml"
    );
    let after = &readme[readme.find(command).unwrap()..];
    let shown = after
        .split("```text\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("a text block after the command");
    let out = planner(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let actual = text(&out.stdout);
    let shown: Vec<&str> = shown.lines().collect();
    let lines: Vec<&str> = actual.lines().collect();
    assert!(
        matches_abridged(&shown, &lines),
        "README.md's first output block is not what `{command}` prints; it prints:\n{actual}"
    );
    // Every printed lower bound is at most the bytes used.
    let arena_rows = lines
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<&str>>())
        .filter(|c| c.len() == 8 && c[1] == "scratch");
    for cells in arena_rows {
        let row = cells.join(" ");
        let (used, bound): (u64, u64) = (cells[3].parse().unwrap(), cells[5].parse().unwrap());
        assert!(bound <= used, "{row}");
    }
}

#[test]
fn reordered_plans_report_their_op_order() {
    let manifest = "[model]\nname = \"br\"\ntensors = [\n\
        { id = \"in\", dtype = \"u8\", shape = [16] },\n\
        { id = \"a1\", dtype = \"u8\", shape = [1024] },\n\
        { id = \"b1\", dtype = \"u8\", shape = [1024] },\n\
        { id = \"a2\", dtype = \"u8\", shape = [16] },\n\
        { id = \"b2\", dtype = \"u8\", shape = [16] },\n\
        { id = \"out\", dtype = \"u8\", shape = [16] },\n]\nops = [\n\
        { opcode = \"A1\", inputs = [\"in\"], outputs = [\"a1\"] },\n\
        { opcode = \"B1\", inputs = [\"in\"], outputs = [\"b1\"] },\n\
        { opcode = \"A2\", inputs = [\"a1\"], outputs = [\"a2\"] },\n\
        { opcode = \"B2\", inputs = [\"b1\"], outputs = [\"b2\"] },\n\
        { opcode = \"JOIN\", inputs = [\"a2\", \"b2\"], outputs = [\"out\"] },\n]\n\
        [platform]\npreset = \"generic\"\nmin_alignment = 16\n";
    let fixed = tmp("order_fixed.toml", manifest);
    let memory = tmp(
        "order_memory.toml",
        &format!("{manifest}[memory]\nschedule = \"memory\"\n"),
    );
    let json = |p: &Path| {
        let out = planner(&["plan", p.to_str().unwrap(), "--format", "json"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    assert_eq!(json(&fixed)["op_order"], serde_json::json!([0, 1, 2, 3, 4]));
    assert_eq!(
        json(&memory)["op_order"],
        serde_json::json!([0, 2, 1, 3, 4])
    );
    let out = planner(&["plan", memory.to_str().unwrap()]);
    let table = text(&out.stdout);
    assert_says(
        &table,
        &[
            "op order: peak of live bytes 1056 (2 ops moved), model order 2064, lower bound over all orders 1040; this order is optimal",
        ],
    );
    let out = planner(&["explain", memory.to_str().unwrap()]);
    let s = text(&out.stdout);
    assert!(
        s.starts_with("op order: 2 of 5 ops run at another step than in the model\n"),
        "{s}"
    );
    assert_says(&s, &["op 2 A2: step 2 in the model, runs at step 1"]);
    let out = planner(&["explain", fixed.to_str().unwrap()]);
    assert!(text(&out.stdout).starts_with("op order: model order kept\n"));
    let out = planner(&["compare", fixed.to_str().unwrap()]);
    let s = text(&out.stdout);
    let row = s
        .lines()
        .find(|l| l.contains("schedule=memory"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(row.contains(" 1056 "), "{row}");
    let out = planner(&["compare", memory.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("schedule=fixed"));
}

/// The op-order line's figures are of whole tensors: beside a plan that runs ops in place
/// (whose arena is below them) it says so, and beside a classic plan it does not.
#[test]
fn the_op_order_line_says_when_the_plan_shares_bytes_below_it() {
    let manifest = |memory: &str| {
        model_toml(
            "pd",
            "tflm_person_detect_int8.tflite",
            &format!("[platform]\npreset = \"generic\"\n[memory]\n{memory}"),
        )
    };
    let qualifier = "(of whole tensors, each in its own bytes: this plan's in-place ops, folded PADs or patch stage are not in these figures)";
    let in_place = tmp("order_in_place.toml", &manifest("in_place = true\n"));
    let classic = tmp("order_classic.toml", &manifest(""));
    let line = |p: &Path| {
        let out = planner(&["plan", p.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let table = text(&out.stdout);
        let line = table
            .lines()
            .find(|l| l.starts_with("op order: peak of live bytes"));
        line.map(str::to_owned)
            .unwrap_or_else(|| panic!("no op-order line in:\n{table}"))
    };
    assert!(line(&in_place).ends_with(qualifier), "{}", line(&in_place));
    assert!(
        !line(&classic).contains("whole tensors"),
        "{}",
        line(&classic)
    );
}

/// `planner import dir/model.tflite` run from dir's parent: printed, the manifest names the
/// model by file name, so saved beside it, it plans; written with `-o`, its source is
/// relative to the manifest's folder, wherever that is.
#[test]
fn import_source_is_relative_to_the_manifest() {
    let base = fresh_dir("import");
    let dir = base.join("dir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        root().join("models/tflm_hello_world_int8.tflite"),
        dir.join("model.tflite"),
    )
    .unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_planner"))
            .args(args)
            .current_dir(&base)
            .output()
            .unwrap()
    };
    let out = run(&["import", "dir/model.tflite"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let starter = text(&out.stdout);
    assert_says(
        &starter,
        &["source = \"model.tflite\"", "planner = \"auto\""],
    );
    std::fs::write(dir.join("model.toml"), &starter).unwrap();
    let out = run(&["plan", "dir/model.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::create_dir_all(base.join("manifests/deep")).unwrap();
    let out = run(&["import", "dir/model.tflite", "-o", "manifests/deep/m.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(base.join("manifests/deep/m.toml")).unwrap();
    assert_says(&written, &["source = \"../../dir/model.tflite\""]);
    let out = run(&["plan", "manifests/deep/m.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

const GROUP_OF_ONE: &str = r#"[group]
name = "g"

[[model]]
name = "a"
tensors = [{ id = "in", dtype = "i8", shape = [16] }, { id = "out", dtype = "i8", shape = [16] }]
ops = [{ opcode = "RELU", inputs = ["in"], outputs = ["out"] }]
"#;

#[test]
fn a_group_of_one_is_a_group_for_every_command() {
    let g = tmp("group_of_one.toml", GROUP_OF_ONE);
    let g = g.to_str().unwrap();
    for cmd in ["plan", "explain", "compare"] {
        let out = planner(&[cmd, g]);
        assert_eq!(out.status.code(), Some(0), "{cmd}: {}", text(&out.stderr));
    }
    let out = planner(&["plan", g]);
    assert!(text(&out.stdout).starts_with("group g: 1 models (a)\n"));
    let out = planner(&["compare", g]);
    let t = text(&out.stdout);
    assert!(t.starts_with("group g · 1 models (a)\n"), "{t}");
    assert!(t.contains("\noptimal  "), "{t}");
}

#[test]
fn a_group_that_costs_more_says_so() {
    let model = |n: &str| {
        format!(
            "[[model]]\nname = \"{n}\"\ntensors = [{{ id = \"in\", dtype = \"i8\", shape = [3] }}, {{ id = \"out\", dtype = \"i8\", shape = [3] }}]\nops = [{{ opcode = \"RELU\", inputs = [\"in\"], outputs = [\"out\"] }}]\n"
        )
    };
    let text_of = |concurrent: &str| {
        format!(
            "[group]\nname = \"g\"\nconcurrent = {concurrent}\n\n{}\n{}\n[platform]\npreset = \"generic\"\nmin_alignment = 1\n[memory]\nconstraints = [{{ name = \"SRAM\", arena_alignment = 64 }}]\n",
            model("a"),
            model("b")
        )
    };
    let p = tmp("costs.toml", &text_of("[[\"a\", \"b\"]]"));
    let out = planner(&["plan", p.to_str().unwrap()]);
    let t = text(&out.stdout);
    assert_says(
        &t,
        &[
            "scratch    SRAM              195        134        -61",
            "total: 195 bytes for the group, 134 as separate plans; the group costs 61 more than separate plans",
        ],
    );
    let p = tmp("saves.toml", &text_of("[]"));
    let out = planner(&["plan", p.to_str().unwrap()]);
    let t = text(&out.stdout);
    assert!(t.contains("; 67 saved\n"), "{t}");
}

#[test]
fn export_tflm_says_tflm_s_head_and_keeps_a_named_planner() {
    let dir = fresh_dir("cli-export");
    let out = dir.join("kws.tflite");
    // `planner export tflm models/<model> -o <out> <extra>`: its summary, once it succeeded.
    let export = |model: &str, extra: &[&str]| {
        let model = root().join("models").join(model);
        let mut args = vec!["export", "tflm", model.to_str().unwrap(), "-o"];
        args.extend([out.to_str().unwrap()].iter().chain(extra));
        let o = planner(&args);
        let msg = text(&o.stdout);
        assert!(o.status.success(), "{msg}{}", text(&o.stderr));
        msg
    };
    // The plan ends at 5960; TFLM rounds its top buffer to 16 (measured head 5968).
    let msg = export("tflm_micro_speech_int8.tflite", &[]);
    assert_says(
        &msg,
        &["non-persistent head 5968 bytes (planner auto; TFLM's own plan 5968 bytes)"],
    );
    let msg = export("tflm_person_detect_int8.tflite", &["--planner", "greedy"]);
    assert_says(
        &msg,
        &["warning: TFLM's arena is 18432 bytes larger than with its own plan"],
    );
}

#[test]
fn a_group_plans_as_json_csv_and_svg() {
    // JSON: each arena with its users, then each model's plan.
    let v = json(&["plan", PAIR, "--format", "json"]);
    assert_eq!(v["group"], "pair");
    assert_eq!(v["concurrent"], serde_json::json!([["b", "c"]]));
    let scratch = &v["arenas"][0];
    assert_eq!(scratch["name"], "scratch.SRAM");
    assert_eq!(scratch["used"], 96);
    assert_eq!(scratch["separate"], 128);
    let users: Vec<(String, u64, u64)> = scratch["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["model"].as_str().unwrap().to_string(),
                u["base"].as_u64().unwrap(),
                u["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        users,
        [
            ("a".to_string(), 0, 32),
            ("b".to_string(), 0, 64),
            ("c".to_string(), 64, 32)
        ]
    );
    let models: Vec<&str> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    assert_eq!(models, ["a", "b", "c"]);
    // CSV: one row per arena user.
    let o = planner(&["plan", PAIR, "--format", "csv"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let csv = text(&o.stdout);
    assert!(
        csv.starts_with("arena,role,memory,arena_bytes,model,base,bytes\n"),
        "{csv}"
    );
    assert_says(&csv, &["scratch.SRAM,scratch,SRAM,96,c,64,32\n"]);
    assert_eq!(csv.lines().count(), 6, "{csv}");
    // SVG: one panel per group arena, each model's block outlined.
    let o = planner(&["plan", PAIR, "--format", "svg"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let svg = text(&o.stdout);
    assert_says(
        &svg,
        &["<title>memory map of group pair (models a, b, c)</title>"],
    );
    assert_eq!(svg.matches("class=\"arena group-arena\"").count(), 3);
    assert_says(
        &svg,
        &[
            "<title>model c: 32 bytes at 64</title>",
            "scratch SRAM: 96 bytes for a 32 B at 0, b 64 B at 0, c 32 B at 64 (separate arenas: 128 bytes)",
        ],
    );
    // The table is still the default.
    let o = planner(&["plan", PAIR]);
    assert!(
        text(&o.stdout).starts_with("group pair"),
        "{}",
        text(&o.stdout)
    );
}

/// Two branches from one input, the model's order interleaving them: each branch's 1000-byte
/// intermediate is live at once in model order, one at a time in a memory-aware order
/// (shared with planner's schedule_alias.rs).
const BRANCHES: &str = include_str!("../../planner/tests/data/branches.toml");

#[test]
fn the_table_says_what_schedule_memory_would_save_and_the_line_to_add() {
    let m = tmp("branches.toml", BRANCHES);
    let o = planner(&["plan", m.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let t = text(&o.stdout);
    let line = t
        .lines()
        .find(|l| l.starts_with("schedule: "))
        .unwrap_or_else(|| panic!("no schedule line: {t}"));
    assert!(
        line.contains(
            "schedule = \"memory\" would plan scratch in 1032 bytes instead of 2024 (992 bytes less, 2 ops moved"
        ),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "add `schedule = \"memory\"` to the [memory] table of {}",
            m.display()
        )),
        "{line}"
    );
    // Once the manifest asks for it, or where it saves nothing, the line is not there.
    let with = tmp(
        "branches_memory.toml",
        &format!("{BRANCHES}\n[memory]\nschedule = \"memory\"\n"),
    );
    let o = planner(&["plan", with.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        !text(&o.stdout).contains("schedule: "),
        "{}",
        text(&o.stdout)
    );
    let o = planner(&["plan", "models/tflm_hello_world_int8.tflite"]);
    assert!(
        !text(&o.stdout).contains("schedule: "),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn compare_gives_its_rows_as_json_or_csv_for_groups_and_models() {
    let rows = json(&["compare", PAIR, "--format", "json"]);
    let rows = rows.as_array().unwrap();
    let tflm = rows
        .iter()
        .find(|r| r["planner"] == "tflm" && r["arena"] == "scratch SRAM")
        .unwrap();
    assert_eq!(tflm["used"], 96);
    assert_eq!(tflm["separate"], 128);
    assert!(tflm["time_ms"].is_number());
    let o = planner(&["compare", PAIR, "--format", "csv"]);
    let csv = text(&o.stdout);
    assert!(
        csv.starts_with("planner,arena,used,separate,lower_bound,ratio,time\n"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), rows.len() + 1);
    let rows = json(&[
        "compare",
        "models/tflm_hello_world_int8.tflite",
        "--format",
        "json",
    ]);
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .any(|r| r["planner"] == "auto")
    );
    let e = refused(&["compare", PAIR, "--format", "svg"]);
    assert_says(&e, &["compare draws no picture"]);
}

#[test]
fn explain_gives_one_row_per_tensor_as_json_or_csv_for_groups_and_models() {
    let rows = json(&["explain", PAIR, "--format", "json"]);
    let c_x = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["model"] == "c" && r["tensor"] == "x")
        .unwrap();
    // Offsets in the group arena: c runs beside b, after b's 64 bytes.
    assert_eq!(c_x["offset"], 64);
    assert_eq!(c_x["memory"], "SRAM");
    let o = planner(&["explain", PAIR, "--format", "csv", "--tensor", "state"]);
    assert_eq!(
        text(&o.stdout),
        "model,tensor,name,role,memory,source_memory,offset,size,reason\nc,state,state,persistent,SRAM,SRAM,0,16,persistent in SRAM: first bank in preference order with room\n"
    );
    // A model's tensor ids stay strings even when they are numbers.
    let rows = json(&[
        "explain",
        "models/tflm_hello_world_int8.tflite",
        "--format",
        "json",
    ]);
    assert_eq!(rows[0]["tensor"], "0");
    assert_eq!(exit_code(&["explain", PAIR, "--format", "svg"]), Some(2));
}

#[test]
fn plan_help_lists_every_preset_from_the_table() {
    let help = stdout_of(&["plan", "--help"]);
    assert!(help.ends_with(&planner::manifest::preset_list()), "{help}");
    for p in planner::manifest::presets() {
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{} ", p.name)))
            .unwrap_or_else(|| panic!("preset {} not listed:\n{help}", p.name));
        assert!(line.ends_with(&p.memory_summary()), "{line}");
    }
    assert_eq!(
        planner::manifest::presets().len(),
        planner::manifest::Platform::PRESETS.len()
    );
}

#[test]
fn patch_options_apply_to_every_model_of_a_group() {
    const GROUP: &str = "planner/tests/data/groups/kws_vww.toml";
    let plain = planner(&["plan", GROUP, "--format", "json"]);
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain.stderr));
    let patched = planner(&["plan", GROUP, "--patches", "auto", "--format", "json"]);
    assert_eq!(patched.status.code(), Some(0), "{}", text(&patched.stderr));
    // Patches change what at least one model's first stage needs.
    assert_ne!(text(&plain.stdout), text(&patched.stdout));
    let off = planner(&["plan", GROUP, "--patches", "off", "--format", "json"]);
    assert_eq!(text(&off.stdout), text(&plain.stdout));
    let out = planner(&["explain", GROUP, "--patches", "auto"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // A fixed split names one model's op.
    let e = refused(&["plan", GROUP, "--patches", "7:2x2"]);
    assert_says(
        &e,
        &["--patches 7:2x2 names an op of one model, but group kws_vww has 2 models"],
    );
    let e = refused(&["plan", GROUP, "--patch-input", "streamed"]);
    assert_says(
        &e,
        &["need patches, but model kws of group kws_vww plans without them"],
    );
}

/// `planner --version`, as docs/cli.md shows it after `cargo install`: the crate's version.
#[test]
fn version_names_the_command_and_the_crate_version() {
    let out = stdout_of(&["--version"]);
    assert_eq!(out, format!("planner {}\n", env!("CARGO_PKG_VERSION")));
    let doc = std::fs::read_to_string(root().join("docs/cli.md")).unwrap();
    assert!(
        doc.contains("cargo install --locked --path planner-build --features cli")
            && doc.contains(&format!(
                "planner --version      # planner {}",
                env!("CARGO_PKG_VERSION")
            )),
        "docs/cli.md's install lines are not what the command does"
    );
}
