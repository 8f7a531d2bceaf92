//! `planner plan` and `planner explain` with `--patches` (issue 27): the summary line, the
//! regions per stage tensor, and the option errors.

#[path = "support/files.rs"]
mod files;
#[path = "support/cli.rs"]
mod support;

use files::model_toml;
use support::{json, refused, stdout_of, tmp};

const MODEL: &str = "models/tflm_person_detect_int8.tflite";

#[test]
fn plan_prints_split_grid_peak_overhead_and_input() {
    let t = stdout_of(&["plan", MODEL, "--patches", "7:4x4"]);
    assert!(
        t.contains("patches: split after op 7 (DEPTHWISE_CONV_2D")
            && t.contains("grid 4x4, 16 patches")
            && t.contains("(+17.7 % MACs)")
            && t.contains("input resident")
            && t.contains("scratch peak 22488 bytes"),
        "{t}"
    );
    let v = json(&[
        "plan",
        MODEL,
        "--patches",
        "auto",
        "--patch-input",
        "streamed",
        "--format",
        "json",
    ]);
    assert_eq!(v["patches"]["input"], "streamed");
    assert_eq!(v["patches"]["scratch_used"], 18432);
    assert!(v["patches"]["mac_overhead_percent"].as_f64().unwrap() <= 20.0);
}

#[test]
fn explain_shows_regions_per_patch() {
    let t = stdout_of(&["explain", MODEL, "--patches", "7:2x2"]);
    let lines: Vec<&str> = t
        .lines()
        .filter(|l| l.starts_with("patch stage:"))
        .collect();
    assert!(lines.len() >= 8, "{t}");
    // The split tensor (12x12) is tiled into four 6x6 tiles.
    assert!(
        lines
            .iter()
            .any(|l| l.contains("(whole") && l.ends_with("[0,0,6,6] [0,6,6,6] [6,0,6,6] [6,6,6,6]")),
        "{t}"
    );
    let t = stdout_of(&["explain", MODEL, "--patches", "7:2x2", "--format", "json"]);
    assert!(t.contains("\"regions\""), "{t}");
}

#[test]
fn bad_patch_options_are_refused() {
    for (args, want) in [
        (&["--patches", "7:4"][..], "OP:ROWSxCOLS"),
        (&["--patches", "7:0x4"][..], "OP:ROWSxCOLS"),
        (&["--patches", "nope:2x2"][..], "no op's output"),
        (&["--patches", "30:2x2"][..], "op 29 (RESHAPE)"),
        (&["--patch-input", "streamed"][..], "need patches"),
        (
            &["--patches", "auto", "--max-recompute=-1"][..],
            "--max-recompute is -1",
        ),
    ] {
        let mut a = vec!["plan", MODEL];
        a.extend_from_slice(args);
        let e = refused(&a);
        assert!(e.contains(want), "{args:?}: {e}");
    }
}

/// `--patches` on a group manifest: `auto` gives every model a patch stage (docs/patches.md
/// once said groups refused it); a fixed split, which names one model's op, is refused.
#[test]
fn a_group_takes_patches_auto_for_every_model() {
    let root = support::root();
    let manifest = support::tmp(
        "patch_group.toml",
        &format!(
            "[group]\nname = \"two\"\n\n[[model]]\nname = \"pd\"\nsource = \"{}\"\n\n\
             [[model]]\nname = \"ic\"\nsource = \"{}\"\n\n[platform]\npreset = \"generic\"\n",
            root.join(MODEL).display(),
            root.join("models/tiny_ic_resnet8_int8.tflite").display()
        ),
    );
    let manifest = manifest.to_str().unwrap();
    let v = json(&["plan", manifest, "--patches", "auto", "--format", "json"]);
    let models = v["models"].as_array().unwrap();
    assert_eq!(models.len(), 2);
    for m in models {
        assert!(
            m["patches"]["grid"].is_array(),
            "model {} has no patches",
            m["model"]
        );
    }
    assert_eq!(models[0]["patches"]["scratch_used"], 22488);
    let off = json(&["plan", manifest, "--format", "json"]);
    assert!(off["models"][0]["patches"].is_null());
    let err = refused(&["plan", manifest, "--patches", "7:4x4"]);
    assert!(err.contains("group two has 2 models"), "{err}");
}

/// A manifest that asks for a streamed input, planned without patches (no op of
/// hello_world's ends a stage): the build says so with the planner's reason, rather than
/// leaving the firmware's `run_streamed()` call to fail to compile.
#[test]
fn a_streamed_input_planned_without_patches_is_a_build_error() {
    let manifest = tmp(
        "streamed_no_patches.toml",
        &model_toml(
            "hw",
            "tflm_hello_world_int8.tflite",
            "\n[platform]\npreset = \"generic\"\n\n[memory]\npatches = \"auto\"\npatch_input = \"streamed\"\n",
        ),
    );
    let out = manifest.with_file_name("streamed_no_patches_out");
    let e = planner_build::Builder::new()
        .manifest(&manifest)
        .out_dir(&out)
        .cargo_directives(false)
        .try_compile()
        .unwrap_err();
    let m = e.message();
    for part in [
        "streamed_no_patches.toml",
        "patch_input = \"streamed\"",
        "planned without patches",
        "no `run_streamed`",
        "the planner said: memory.patches = \"auto\" found no op that ends a patch stage",
        "has a [1, H, W, C] output to split",
        "remove patch_input",
    ] {
        assert!(m.contains(part), "{part:?} not in: {m}");
    }
    assert!(
        !out.exists() || std::fs::read_dir(&out).unwrap().next().is_none(),
        "nothing written"
    );
}
