//! `memory.patches`: the patch-based first stage (issue 27). The targets on the bundled
//! vision models, the plan file's record, the refusal of a global op in the stage, the
//! manifest's errors at their line and column, and the same bytes on every run.

mod common;

use std::path::{Path, PathBuf};

use planner::graph::{DType, Graph, IoName, Op, OpOptions, Tensor, TensorIndex, TensorKind};
use planner::manifest::Manifest;
use planner::patch::{PatchMode, SplitRef};
use planner::planfile::patch::PatchInput;
use planner::planfile::{BuildPlanFile, Layout, PlanFile};
use planner::rt::options::{
    Activation, Conv2dOptions, DepthwiseConv2dOptions, Dims, FullyConnectedOptions, MeanOptions,
    Padding,
};
use planner::{Planned, verify};

use common::{assert_says, bundled_models, op, root, tensor};

fn model(name: &str) -> PathBuf {
    root().join(format!("models/{name}.tflite"))
}

/// Asserts that the verifier refuses `plan` for `g` with a message saying `part`.
#[track_caller]
fn refused_by_verify(g: &Graph, plan: &planner::plan::MemoryPlan, part: &str) {
    let msgs: Vec<String> = verify::verify(g, plan)
        .unwrap_err()
        .iter()
        .map(|v| v.to_string())
        .collect();
    assert!(msgs.iter().any(|m| m.contains(part)), "{msgs:?}");
}

fn plan(path: &Path, mode: PatchMode, input: PatchInput, in_place: bool) -> Planned {
    let mut m = Manifest::for_model_file(path);
    m.aliasing.in_place = in_place;
    m.patches.mode = mode;
    m.patches.input = input;
    let g = planner::import::load(&m).unwrap();
    planner::plan_graph(&m, &g).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn auto() -> PatchMode {
    PatchMode::Auto { max_recompute: 0.2 }
}

fn scratch(p: &Planned) -> u64 {
    p.scratch_reports.iter().map(|r| r.used).sum()
}

fn overhead(p: &Planned) -> f64 {
    let pp = p.graph.patches.as_ref().expect("a patch plan");
    pp.patch_macs as f64 / pp.macs as f64 - 1.0
}

/// The targets: te_mcunetv2_large at most 830,000 bytes resident (750,000 in
/// place), tflm_person_detect_int8 at most 23,000, te_mcunet_vww at most 52,000 streamed,
/// each at most 20 % more MACs; pinned at the figures `auto` reaches.
#[test]
fn auto_meets_the_targets() {
    use PatchInput::{Resident, Streamed};
    let cases = [
        ("te_mcunetv2_large", Resident, false, 830_000, 702_784),
        ("te_mcunetv2_large", Resident, true, 750_000, 675_904),
        ("tflm_person_detect_int8", Resident, false, 23_000, 22_488),
        ("te_mcunet_vww", Streamed, false, 52_000, 51_648),
    ];
    for (name, input, in_place, target, pinned) in cases {
        let p = plan(&model(name), auto(), input, in_place);
        let used = scratch(&p);
        assert!(used <= target, "{name}: {used} > {target}");
        assert_eq!(used, pinned, "{name} {input:?} in_place={in_place}");
        let o = overhead(&p);
        assert!((0.0..=0.2).contains(&o), "{name}: MAC overhead {o}");
    }
}

/// A given split and grid plans what the independent peak model computes for it
/// (`peak_model.py`: te_mcunetv2_large 4x4 after op 11 = 817,984 resident, te_mcunet_vww
/// 2x2 after op 8 = 51,648 streamed).
#[test]
fn fixed_split_matches_the_peak_model() {
    // `name` split after op `i` into an `n` x `n` grid.
    let fixed = |name, i, n, input| {
        let mode = PatchMode::Fixed {
            split: SplitRef::Index(i),
            grid: [n, n],
        };
        plan(&model(name), mode, input, false)
    };
    let p = fixed("te_mcunetv2_large", 11, 4, PatchInput::Resident);
    assert_eq!(scratch(&p), 817_984);
    let p = fixed("te_mcunet_vww", 8, 2, PatchInput::Streamed);
    assert_eq!(scratch(&p), 51_648);
    let pp = p.graph.patches.as_ref().unwrap();
    assert!((overhead(&p) - 0.014).abs() < 0.001, "{}", overhead(&p));
    assert_eq!(pp.grid, [2, 2]);
}

/// The plan file carries the stage: the stage ops first, the split tensor's regions its
/// tiles (they partition it), every stage tensor listed with one region per patch, the
/// dense ones placed at their largest region's bytes, a streamed input too; and the same
/// bytes on a second run.
#[test]
fn plan_file_records_the_stage_and_is_deterministic() {
    let path = model("te_mcunet_vww");
    let bytes = |input| {
        let p = plan(&path, auto(), input, true);
        let m = Manifest::for_model_file(&path);
        let f = PlanFile::from_plan(&p.graph, &p.plan, &Layout::of(&m)).unwrap();
        (f.to_bytes(), f)
    };
    for input in [PatchInput::Resident, PatchInput::Streamed] {
        let (a, f) = bytes(input);
        let (b, _) = bytes(input);
        assert_eq!(a, b, "two runs differ");
        let pp = f.patches.as_ref().expect("patches in the plan file");
        assert_eq!(pp.input, input);
        let split = f.ops[pp.split as usize].outputs[0];
        let n = pp.patches();
        let entry = pp.tensor(split).expect("the split tensor is listed");
        let shape = &f.tensors[split as usize].shape;
        let (h, w) = (shape[1] as usize, shape[2] as usize);
        let mut covered = vec![0u8; h * w];
        for r in &entry.regions {
            for y in r[0]..r[0] + r[2] {
                for x in r[1]..r[1] + r[3] {
                    covered[y as usize * w + x as usize] += 1;
                }
            }
        }
        assert!(covered.iter().all(|&c| c == 1), "tiles do not partition");
        let model_input = f.inputs[0].tensor;
        for t in &pp.tensors {
            assert_eq!(t.regions.len(), n);
            let e = &f.tensors[t.tensor as usize];
            let whole =
                t.tensor == split || (input == PatchInput::Resident && t.tensor == model_input);
            let elems: u64 = e.shape.iter().product();
            let bytes_per = e.size as f64;
            if whole {
                assert_eq!(e.size, elems * dtype_bytes(e.dtype), "{} whole", e.id);
            } else {
                let px = t.regions.iter().map(|r| r[2] as u64 * r[3] as u64).max();
                let c = *e.shape.last().unwrap();
                assert_eq!(e.size, px.unwrap() * c * dtype_bytes(e.dtype), "{}", e.id);
                assert!(bytes_per < (elems * dtype_bytes(e.dtype)) as f64 || n == 1);
            }
        }
        // The stage is ops[0..=split] and reads the model input.
        assert!(pp.tensor(model_input).is_some());
    }
}

fn dtype_bytes(d: DType) -> u64 {
    d.bytes_for(1).unwrap()
}

/// The verifier knows the stage: a split tensor whose lifetime starts at its producer
/// instead of op 0 is refused, and a resident input that dies before the split op.
#[test]
fn verifier_pins_the_split_tensor() {
    let p = plan(
        &model("tflm_person_detect_int8"),
        auto(),
        PatchInput::Resident,
        false,
    );
    assert!(verify::verify(&p.graph, &p.plan).is_ok());
    let pp = p.graph.patches.as_ref().unwrap();
    let split = p.graph.ops[pp.split as usize].outputs[0];
    let id = p.graph.tensor(split).id.clone();
    let mut bad = p.plan.clone();
    let l = bad.tensor_lifetimes.get_mut(&id).unwrap();
    assert_eq!(l.start_op, 0);
    l.start_op = pp.split;
    let e = verify::verify(&p.graph, &bad).unwrap_err();
    assert!(
        e.iter().any(|v| v.to_string().contains(&id)),
        "{:?}",
        e.iter().map(|v| v.to_string()).collect::<Vec<_>>()
    );
    // A resident model input that the plan lets die before the split op (every patch reads
    // its region up to there) is refused.
    let input = p.graph.inputs[0].tensor;
    assert!(pp.tensor(input.0).is_some(), "the stage reads the input");
    let id = p.graph.tensor(input).id.clone();
    let mut bad = p.plan.clone();
    let l = bad.tensor_lifetimes.get_mut(&id).unwrap();
    assert!(l.end_op >= pp.split, "{l:?}");
    l.end_op = 0;
    let e = verify::verify(&p.graph, &bad).unwrap_err();
    assert!(
        e.iter().any(|v| v.to_string().contains(&id)),
        "{:?}",
        e.iter().map(|v| v.to_string()).collect::<Vec<_>>()
    );
    // Tiles that leave a pixel of the split tensor out, and a region past a tensor's
    // border, are refused too.
    let mut g = p.graph.clone();
    let pp = g.patches.as_mut().unwrap();
    let e = pp.tensors.iter_mut().find(|t| t.tensor == split.0).unwrap();
    e.regions[0][2] -= 1;
    refused_by_verify(&g, &p.plan, "cover pixel");
    let mut g = p.graph.clone();
    let pp = g.patches.as_mut().unwrap();
    pp.tensors[0].regions[0][3] += 1000;
    refused_by_verify(&g, &p.plan, "outside it");
}

/// The stage rule (`patch_plan::stage_op`), kept by the planner, its verifier and the
/// macro: nothing runs in place inside a stage (te_mcunet_vww streamed and in place ran its
/// first QUANTIZE there, which the macro refused; tiny_ic_resnet8 an ADD, which the
/// reference kernels refused at run time), and no stage op has a float32 output.
#[test]
fn nothing_runs_in_place_or_in_float32_inside_a_stage() {
    for (name, input) in [
        ("te_mcunet_vww", PatchInput::Streamed),
        ("tiny_ic_resnet8_int8", PatchInput::Resident),
    ] {
        let mode = PatchMode::Auto { max_recompute: 0.5 };
        let p = plan(&model(name), mode, input, true);
        let split = p.graph.patches.as_ref().expect("patches").split as usize;
        verify::verify(&p.graph, &p.plan).unwrap();
        assert!(
            p.graph
                .in_place
                .iter()
                .all(|ip| p.graph.producer(ip.output).is_some_and(|k| k > split)),
            "{name}: an op runs in place inside the stage"
        );
        assert!(
            !p.graph.in_place.is_empty(),
            "{name}: in place after the stage"
        );
        // Declared in place inside the stage, op 0 is refused by the rule.
        let mut g = p.graph.clone();
        let op = &g.ops[0];
        let (input, output) = (op.inputs[0].unwrap(), op.outputs[0]);
        g.in_place.push(planner::graph::InPlaceOp {
            input,
            output,
            temp: None,
            rows: false,
        });
        refused_by_verify(
            &g,
            &p.plan,
            "it runs in place, and in-place kernels run on whole tensors only",
        );
        // A float32 stage tensor.
        let mut g = p.graph.clone();
        g.tensors[output.get()].dtype = DType::F32;
        refused_by_verify(&g, &p.plan, "its output is f32");
    }
}

/// The validated graph `name` of `tensors` and `ops`, one input and one output (named as
/// their tensors).
fn graph(name: &str, (tensors, ops): (Vec<Tensor>, Vec<Op>), (input, output): (u32, u32)) -> Graph {
    let io = |i: u32, t: &[Tensor]| IoName {
        name: t[i as usize].id.clone(),
        tensor: TensorIndex(i),
    };
    let g = Graph {
        name: name.into(),
        inputs: vec![io(input, &tensors)],
        outputs: vec![io(output, &tensors)],
        tensors,
        ops,
        ..Graph::default()
    };
    g.validate().unwrap();
    g
}

fn conv() -> OpOptions {
    OpOptions::Conv2d(Conv2dOptions {
        padding: Padding::Same,
        pads: Dims::EMPTY,
        stride_w: 1,
        stride_h: 1,
        dilation_w: 1,
        dilation_h: 1,
        activation: Activation::None,
    })
}

/// x -CONV-> a -(MEAN or FULLY_CONNECTED)-> b -CONV 1x1-> c: a split at the last conv puts
/// the global op in the stage.
fn global(opcode: &str) -> Graph {
    use TensorKind::{Activation as A, Constant as C};
    let (mid, options) = match opcode {
        "MEAN" => (
            vec![1, 1, 1, 8],
            OpOptions::Mean(MeanOptions {
                axes: Dims::new(&[1, 2]).unwrap(),
                keep_dims: true,
            }),
        ),
        _ => (
            vec![1, 1, 1, 8],
            OpOptions::FullyConnected(FullyConnectedOptions {
                activation: Activation::None,
                weights_format: Default::default(),
                keep_num_dims: true,
                asymmetric_quantize_inputs: false,
            }),
        ),
    };
    let mut w = tensor("w", &[8, 3, 3, 3], C);
    w.data = Some(vec![0u8; 216].into());
    let mut w2 = tensor("w2", &[8, 1, 1, 8], C);
    w2.data = Some(vec![0u8; 64].into());
    let mut fc = tensor("fc", &[8, 8], C);
    fc.data = Some(vec![0u8; 64].into());
    let tensors = vec![
        tensor("x", &[1, 16, 16, 3], A),
        w,
        tensor("a", &[1, 16, 16, 8], A),
        tensor("b", &mid, A),
        w2,
        tensor("c", &[1, 1, 1, 8], A),
        fc,
    ];
    let ops = vec![
        op("CONV_2D", &[0, 1], 2, conv()),
        op(
            opcode,
            if opcode == "MEAN" { &[2] } else { &[2, 6] },
            3,
            options,
        ),
        op("CONV_2D", &[3, 4], 5, conv()),
    ];
    graph("global", (tensors, ops), (0, 5))
}

/// A split whose stage holds a global op (MEAN, FULLY_CONNECTED) is refused, naming the op,
/// its index and the fix; `auto` plans such a model without patches, with a warning.
#[test]
fn a_global_op_in_the_stage_is_refused() {
    for opcode in ["MEAN", "FULLY_CONNECTED"] {
        let g = global(opcode);
        let mut m = Manifest::for_model_file(Path::new("global.tflite"));
        m.patches.mode = PatchMode::Fixed {
            split: SplitRef::Index(2),
            grid: [1, 1],
        };
        let e = planner::plan_graph(&m, &g).unwrap_err().to_string();
        assert!(
            e.contains(&format!("op 1 ({opcode})"))
                && e.contains("not spatially local")
                && e.contains("pick a split op before op 1"),
            "{e}"
        );
        // A split before the global op is fine.
        m.patches.mode = PatchMode::Fixed {
            split: SplitRef::Name("a".into()),
            grid: [2, 2],
        };
        let p = planner::plan_graph(&m, &g).unwrap();
        assert_eq!(p.graph.patches.as_ref().unwrap().split, 0);
        m.patches.mode = auto();
        assert!(planner::plan_graph(&m, &g).is_ok());
    }
}

/// x (NCHW) -TRANSPOSE-> a (NHWC) -CONV-> b -CONV-> c: a layout op as the model's first op,
/// as converted PyTorch networks begin.
fn leading_transpose() -> Graph {
    use TensorKind::{Activation as A, Constant as C};
    let mut perm = tensor("perm", &[4], C);
    perm.dtype = DType::I32;
    perm.size = 16;
    perm.data = Some(
        [0i32, 2, 3, 1]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>()
            .into(),
    );
    let mut w = tensor("w", &[8, 3, 3, 3], C);
    w.data = Some(vec![0u8; 216].into());
    let mut w2 = tensor("w2", &[8, 3, 3, 8], C);
    w2.data = Some(vec![0u8; 576].into());
    let tensors = vec![
        tensor("x", &[1, 3, 16, 16], A),
        perm,
        tensor("a", &[1, 16, 16, 3], A),
        w,
        tensor("b", &[1, 16, 16, 8], A),
        w2,
        tensor("c", &[1, 16, 16, 8], A),
    ];
    let ops = vec![
        op("TRANSPOSE", &[0, 1], 2, OpOptions::None),
        op("CONV_2D", &[2, 3], 4, conv()),
        op("CONV_2D", &[4, 5], 6, conv()),
    ];
    graph("nchw", (tensors, ops), (0, 6))
}

/// When an op blocks every split, `auto`'s warning names it and why, and a fixed split
/// says the model cannot run patch by patch rather than asking for a split op before op 0.
#[test]
fn the_op_that_blocks_every_split_is_named() {
    let g = leading_transpose();
    let mut m = Manifest::for_model_file(Path::new("nchw.tflite"));
    m.patches.mode = auto();
    let p = planner::plan_graph(&m, &g).unwrap();
    assert!(p.graph.patches.is_none());
    let warning = p
        .warnings
        .iter()
        .find(|w| w.contains("memory.patches"))
        .unwrap_or_else(|| panic!("no patch warning in {:?}", p.warnings));
    assert_says(
        warning,
        &[
            "op 0 (TRANSPOSE)",
            "not spatially local",
            "planned without patches",
        ],
    );
    assert!(!warning.contains("before op 0"), "{warning}");
    m.patches.mode = PatchMode::Fixed {
        split: SplitRef::Index(2),
        grid: [2, 2],
    };
    let e = planner::plan_graph(&m, &g).unwrap_err().to_string();
    assert_says(&e, &["op 0 (TRANSPOSE)", "cannot run patch by patch"]);
    assert!(!e.contains("before op 0"), "{e}");
    // `patches_required` turns auto's fallback into that error.
    m.patches.mode = auto();
    m.patches.required = true;
    let e = planner::plan_graph(&m, &g).unwrap_err().to_string();
    assert_says(
        &e,
        &[
            "memory.patches_required = true, but",
            "op 0 (TRANSPOSE)",
            "remove patches_required",
        ],
    );
    // A model that patches well plans as before.
    let mut m = Manifest::for_model_file(&model("tflm_person_detect_int8"));
    m.patches.mode = auto();
    m.patches.required = true;
    let g = planner::import::load(&m).unwrap();
    assert!(planner::plan_graph(&m, &g).unwrap().graph.patches.is_some());
}

/// The manifest's patch keys, and their errors at the line and column of `patches`.
#[test]
fn manifest_patches_and_their_errors() {
    let base = "[model]\nname = \"m\"\nsource = \"m.tflite\"\n[memory]\n";
    let parse = |extra: &str| Manifest::parse(&format!("{base}{extra}"), Path::new("m.toml"));
    let m = parse("").unwrap();
    assert_eq!(m.patches.mode, PatchMode::Off, "off by default");
    let m = parse("patches = \"auto\"\n").unwrap();
    assert_eq!(m.patches.mode, PatchMode::Auto { max_recompute: 0.2 });
    let m =
        parse("patches = \"auto\"\nmax_recompute = 0.05\npatch_input = \"streamed\"\n").unwrap();
    assert_eq!(
        m.patches.mode,
        PatchMode::Auto {
            max_recompute: 0.05
        }
    );
    assert_eq!(m.patches.input, PatchInput::Streamed);
    let m =
        parse("patches = { split = \"conv_3\", grid = [4, 3], input = \"streamed\" }\n").unwrap();
    assert_eq!(
        m.patches.mode,
        PatchMode::Fixed {
            split: SplitRef::Name("conv_3".into()),
            grid: [4, 3]
        }
    );
    assert_eq!(m.patches.input, PatchInput::Streamed);
    let m = parse("patches = { split = 12, grid = [2, 2] }\n").unwrap();
    assert_eq!(
        m.patches.mode,
        PatchMode::Fixed {
            split: SplitRef::Index(12),
            grid: [2, 2]
        }
    );
    // (manifest lines, what the error says)
    let refused: &[(&str, &[&str])] = &[
        (
            "patches = \"sometimes\"\n",
            &["m.toml:5:11", "\"sometimes\""],
        ),
        ("patches = { split = 3 }\n", &["m.toml:5:11", "no `grid`"]),
        (
            "patches = { split = 3, grid = [0, 2] }\n",
            &["m.toml:5:11", "[0, 2]"],
        ),
        (
            "patches = { split = 3, grid = [2, 2], size = 4 }\n",
            &["unknown key `size`"],
        ),
        (
            "patches = \"auto\"\nmax_recompute = -1\n",
            &["m.toml:6:17", "-1"],
        ),
        (
            "patch_input = \"streamed\"\n",
            &["m.toml:5:15", "patches is not"],
        ),
        (
            "patches = \"auto\"\npatch_input = \"camera\"\n",
            &["m.toml:6:15", "\"camera\""],
        ),
    ];
    for (extra, says) in refused {
        assert_says(&parse(extra).unwrap_err().to_string(), says);
    }
}

/// A split op the model does not have is refused at `patches`' line and column when the
/// model is planned.
#[test]
fn unknown_split_names_the_manifest_line() {
    let dir = std::env::temp_dir().join(format!("pplan-patch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = model("tflm_person_detect_int8");
    let text = format!(
        "[model]\nname = \"m\"\nsource = {:?}\n[memory]\npatches = {{ split = \"Conv2d_4_nope\", grid = [4, 4] }}\n",
        src.display().to_string()
    );
    let path = dir.join("m.toml");
    std::fs::write(&path, &text).unwrap();
    let m = planner::manifest::load(&path).unwrap();
    let e = planner::plan(&m).unwrap_err().to_string();
    assert!(
        e.contains("m.toml:5:11") && e.contains("Conv2d_4_nope") && e.contains("no op's output"),
        "{e}"
    );
    let text = text.replace("\"Conv2d_4_nope\"", "99");
    std::fs::write(&path, &text).unwrap();
    let m = planner::manifest::load(&path).unwrap();
    let e = planner::plan(&m).unwrap_err().to_string();
    assert_says(&e, &["m.toml:5:11", "op 99"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// How long `patches = "auto"` takes per bundled model, beside the plan without patches
/// (best of 5; printed, not asserted: run `cargo test --release -p planner --test patch --
/// --ignored --nocapture auto_timing`).
#[test]
#[ignore]
fn auto_timing() {
    let models = bundled_models(&root());
    for path in models {
        let m0 = Manifest::for_model_file(&path);
        let g = planner::import::load(&m0).unwrap();
        let time = |mode: PatchMode, input, in_place| {
            let mut m = m0.clone();
            m.patches.mode = mode;
            m.patches.input = input;
            m.aliasing.in_place = in_place;
            (0..5)
                .map(|_| {
                    let t = std::time::Instant::now();
                    let p = planner::plan_graph(&m, &g).unwrap();
                    (t.elapsed().as_secs_f64() * 1e3, scratch(&p))
                })
                .fold((f64::MAX, 0), |a, b| (a.0.min(b.0), b.1))
        };
        let off = time(PatchMode::Off, PatchInput::Resident, false);
        let res = time(auto(), PatchInput::Resident, false);
        let st = time(auto(), PatchInput::Streamed, false);
        let resi = time(auto(), PatchInput::Resident, true);
        let sti = time(auto(), PatchInput::Streamed, true);
        println!(
            "{:28} off {:7.2} ms | auto resident {:7.2} ms | streamed {:7.2} ms | resident in-place {:7.2} ms | streamed in-place {:7.2} ms",
            path.file_stem().unwrap().to_string_lossy(),
            off.0,
            res.0,
            st.0,
            resi.0,
            sti.0
        );
    }
}

/// A plan file's patch plan reads back, and one edited out of shape is refused on parse.
#[test]
fn plan_file_patches_read_back_and_are_checked() {
    let path = model("tflm_person_detect_int8");
    let p = plan(&path, auto(), PatchInput::Streamed, false);
    let m = Manifest::for_model_file(&path);
    let f = PlanFile::from_plan(&p.graph, &p.plan, &Layout::of(&m)).unwrap();
    let text = String::from_utf8(f.to_bytes()).unwrap();
    let back = PlanFile::parse(&text, "p.json").unwrap();
    assert_eq!(back.patches, f.patches);
    let mut bad = f.clone();
    bad.patches.as_mut().unwrap().tensors[1].regions.pop();
    let e = PlanFile::parse(&String::from_utf8(bad.to_bytes()).unwrap(), "p.json")
        .unwrap_err()
        .to_string();
    assert_says(&e, &["p.json has a bad patch plan", "regions for a"]);
    let mut bad = f.clone();
    let t = bad.patches.as_ref().unwrap().tensors[1].tensor as usize;
    bad.tensors[t].size += 1;
    let e = PlanFile::parse(&String::from_utf8(bad.to_bytes()).unwrap(), "p.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("largest region takes"), "{e}");
}

/// `memory.patches_required`: read with `patches`, refused without it at its position.
#[test]
fn patches_required_is_read_and_needs_patches() {
    let base = "[model]\nname = \"m\"\nsource = \"m.tflite\"\n[memory]\n";
    let parse = |extra: &str| Manifest::parse(&format!("{base}{extra}"), Path::new("m.toml"));
    assert!(!parse("patches = \"auto\"\n").unwrap().patches.required);
    let m = parse("patches = \"auto\"\npatches_required = true\n").unwrap();
    assert!(m.patches.required);
    let e = parse("patches = \"off\"\npatches_required = true\n")
        .unwrap_err()
        .to_string();
    assert_says(&e, &["m.toml:6:", "but memory.patches is \"off\""]);
    let e = parse("patches_required = true\n").unwrap_err().to_string();
    assert_says(
        &e,
        &[
            "m.toml:5:",
            "patches_required is set but memory.patches is not",
        ],
    );
}

/// `auto` with in-place ops never plans more scratch than in-place ops alone: a patch
/// plan is kept only when it is below the plan without patches, and with in-place ops that
/// plan can be below the live-bytes bound `auto` ranks candidates by. Every bundled model
/// (its input resident: a streamed input needs patches), at two budgets.
#[test]
fn auto_in_place_is_never_above_in_place_alone() {
    use PatchInput::Resident;
    let mut compared = 0;
    for path in bundled_models(&root()) {
        let alone = scratch(&plan(&path, PatchMode::Off, Resident, true));
        for max_recompute in [0.2, 3.0] {
            let mode = PatchMode::Auto { max_recompute };
            let p = plan(&path, mode, Resident, true);
            let used = scratch(&p);
            assert!(
                used <= alone,
                "{}: auto (max_recompute {max_recompute}) with in place {used} > in place alone {alone}",
                path.display()
            );
            compared += 1;
        }
    }
    assert!(compared >= 20, "{compared}");
}

/// x -DEPTHWISE-> a -DEPTHWISE-> b -CONV 3x3 stride 2-> d: in place, the two depthwise ops
/// share one buffer, so in-place ops alone need about x and d, below any patch plan (which
/// keeps the resident input whole beside its patches), while a patch plan is still below
/// the live bytes without in-place ops (x and a): `auto` must plan both and keep the lower.
fn depthwise_chain() -> Graph {
    use TensorKind::{Activation as A, Constant as C};
    let dw = || {
        OpOptions::DepthwiseConv2d(DepthwiseConv2dOptions {
            padding: Padding::Same,
            pads: Dims::EMPTY,
            stride_w: 1,
            stride_h: 1,
            depth_multiplier: 1,
            dilation_w: 1,
            dilation_h: 1,
            activation: Activation::None,
        })
    };
    let mut down = conv();
    if let OpOptions::Conv2d(c) = &mut down {
        (c.stride_w, c.stride_h) = (2, 2);
    }
    let constant = |id: &str, shape: &[u64]| {
        let mut t = tensor(id, shape, C);
        t.data = Some(vec![0u8; shape.iter().product::<u64>() as usize].into());
        t
    };
    let tensors = vec![
        tensor("x", &[1, 48, 48, 16], A),
        constant("w1", &[1, 3, 3, 16]),
        tensor("a", &[1, 48, 48, 16], A),
        constant("w2", &[1, 3, 3, 16]),
        tensor("b", &[1, 48, 48, 16], A),
        constant("w3", &[8, 3, 3, 16]),
        tensor("d", &[1, 24, 24, 8], A),
    ];
    let ops = vec![
        op("DEPTHWISE_CONV_2D", &[0, 1], 2, dw()),
        op("DEPTHWISE_CONV_2D", &[2, 3], 4, dw()),
        op("CONV_2D", &[4, 5], 6, down),
    ];
    graph("depthwise_chain", (tensors, ops), (0, 6))
}

/// On [`depthwise_chain`], `auto` with in-place ops plans no more than in-place ops alone
/// (it used to keep a patch plan above it, being below the bound without in-place ops).
#[test]
fn auto_in_place_keeps_in_place_alone_when_it_is_lower() {
    let g = depthwise_chain();
    let planned = |mode: PatchMode| {
        let mut m = Manifest::for_model_file(Path::new("depthwise_chain.tflite"));
        m.aliasing.in_place = true;
        m.patches.mode = mode;
        planner::plan_graph(&m, &g).unwrap()
    };
    let alone = planned(PatchMode::Off);
    let auto = planned(PatchMode::Auto { max_recompute: 3.0 });
    let (a, b) = (scratch(&alone), scratch(&auto));
    assert!(b <= a, "auto {b} > in place alone {a}");
    // It planned without patches, and says why.
    assert!(auto.graph.patches.is_none());
    let warnings = auto.warnings.join("\n");
    assert_says(
        &warnings,
        &["found no patch plan below the plan without patches"],
    );
}
