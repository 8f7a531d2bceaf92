//! `planner plan` and `planner explain` with `--patches` (issue 27): the summary line, the
//! regions per stage tensor, and the option errors.

#[path = "support/cli.rs"]
mod support;

use support::{json, refused, stdout_of};

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
