//! Tests of the loader: names and paths, the checks code generation relies on.

use super::*;
use planner::planfile::BuildPlanFile;

#[test]
fn names_and_paths_are_told_apart() {
    assert!(!is_path("kws"));
    assert!(is_path("plans/kws.plan.json"));
    assert!(is_path("kws.plan.json"));
    assert_eq!(
        stub_name("../plans/no-such-model.plan.json"),
        "no_such_model"
    );
    assert_eq!(stub_name("hello_world"), "hello_world");
}

#[test]
fn raw_byte_types_view_their_bytes() {
    assert_eq!(view_elements(DType::I8, &[2, 3], 6), Some(6));
    assert_eq!(view_elements(DType::I4, &[2, 3], 3), Some(3));
    assert_eq!(view_elements(DType::F32, &[], 4), Some(1));
    assert_eq!(view_elements(DType::I8, &[u64::MAX, 2], 0), None);
}

#[test]
fn in_place_declarations_are_checked() {
    use planner::planfile::InPlaceEntry;
    use planner::rt::options::{NoOptions, OpOptions};
    let (g, p, l) = planner::planfile::fixture::tiny();
    let file = PlanFile::from_plan(&g, &p, &l).unwrap();
    let decl = InPlaceEntry {
        input: 0,
        output: 0,
        temp: None,
        rows: false,
    };
    // Op 1 (FULLY_CONNECTED) cannot run in place, nor with row overlap.
    let mut f = file.clone();
    f.ops[1].in_place = Some(decl);
    let e = check_in_place(&f).unwrap_err();
    assert!(e.contains("op 1 (FULLY_CONNECTED) of model `tiny`"), "{e}");
    assert!(e.contains("never runs in place"), "{e}");
    f.ops[1].in_place = Some(InPlaceEntry { rows: true, ..decl });
    let e = check_in_place(&f).unwrap_err();
    assert!(
        e.contains("op 1 (FULLY_CONNECTED) of model `tiny` runs with row overlap, but it does not slide a window down a [1, H, W, C] input"),
        "{e}"
    );
    // As a RELU over `h` (op 0's output), it can, once `out` sits at `h`'s offset.
    let mut f = file.clone();
    f.ops[1].opcode = "RELU".into();
    f.ops[1].options = OpOptions::Relu(NoOptions {});
    f.ops[1].inputs = vec![Some(3)];
    f.ops[1].in_place = Some(decl);
    let e = check_in_place(&f).unwrap_err();
    assert!(e.contains("not at its input `h`'s offset 16"), "{e}");
    f.tensors[6].offset = f.tensors[3].offset;
    assert_eq!(check_in_place(&f), Ok(()));
    let mut bad = f.clone();
    bad.ops[1].in_place = Some(InPlaceEntry { input: 1, ..decl });
    assert!(check_in_place(&bad).unwrap_err().contains("input #1"));
    let mut bad = f.clone();
    bad.ops[1].in_place = Some(InPlaceEntry { output: 2, ..decl });
    assert!(check_in_place(&bad).unwrap_err().contains("output #2"));
    let mut bad = f.clone();
    bad.ops[1].in_place = Some(InPlaceEntry {
        temp: Some(0),
        ..decl
    });
    assert!(check_in_place(&bad).unwrap_err().contains("scratch #0"));
    let mut bad = f.clone();
    bad.outputs[0].tensor = 3;
    assert!(check_in_place(&bad).unwrap_err().contains("model output"));
    // Read by a later op.
    let mut bad = f.clone();
    let mut again = bad.ops[1].clone();
    again.in_place = None;
    again.outputs = vec![0];
    bad.ops.push(again);
    let e = check_in_place(&bad).unwrap_err();
    assert!(e.contains("op 2 (RELU) reads it later"), "{e}");
    // Read twice by the op.
    let mut bad = f.clone();
    bad.ops[1].inputs = vec![Some(3), Some(3)];
    assert!(check_in_place(&bad).unwrap_err().contains("also reads"));
    // A constant.
    let mut bad = f.clone();
    bad.tensors[3].kind = planner::graph::TensorKind::Constant;
    assert!(
        check_in_place(&bad)
            .unwrap_err()
            .contains("constant tensor")
    );
}

#[test]
fn out_of_range_indices_are_errors_not_panics() {
    let (g, p, l) = planner::planfile::fixture::tiny();
    let mut f = PlanFile::from_plan(&g, &p, &l).unwrap();
    assert_eq!(check_indices(&f), Ok(()));
    f.ops[0].outputs[0] = 99;
    let e = check_indices(&f).unwrap_err();
    assert!(e.contains("op 0 (FULLY_CONNECTED) names tensor #99"), "{e}");
    let mut f = PlanFile::from_plan(&g, &p, &l).unwrap();
    f.tensors[0].arena = 7;
    assert!(check_indices(&f).unwrap_err().contains("names arena #7"));
    let mut f = PlanFile::from_plan(&g, &p, &l).unwrap();
    f.arenas[0].memory = "NOPE".into();
    assert!(check_indices(&f).unwrap_err().contains("`NOPE`"));
}

/// The UI fixture with a patch stage, as written on disk.
fn patch_fixture() -> PlanFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ui/plans/patches.plan.json");
    let text = std::fs::read_to_string(&path).unwrap();
    match read(&text, "patches.plan.json").unwrap() {
        AnyPlan::Model(f) => f,
        AnyPlan::Group(_) => unreachable!("a model plan"),
    }
}

fn p(f: &mut PlanFile) -> &mut planner::planfile::patch::PatchPlan {
    f.patches.as_mut().unwrap()
}

#[test]
fn patch_stages_are_checked() {
    let file = patch_fixture();
    let views = check_patches(&file).unwrap();
    // x (the resident input) and b (the split tensor) whole, a dense, y outside.
    let whole: Vec<_> = views.iter().map(|v| v.map(|v| v.whole)).collect();
    assert_eq!(whole, [Some(true), Some(false), Some(true), None]);
    let fails = |edit: &dyn Fn(&mut PlanFile), want: &str| {
        let mut f = file.clone();
        edit(&mut f);
        let e = check_patches(&f).unwrap_err();
        assert!(e.contains(want), "{e}");
    };

    fails(&|f| p(f).split = 3, "ends at op 3, but the model has 3 ops");
    fails(
        &|f| p(f).grid = [0, 2],
        "the patch grid of model `patches` is 0x2",
    );
    fails(
        &|f| p(f).tensors[0].regions.pop().map(drop).unwrap_or(()),
        "tensor `x` of the patch stage of model `patches` has 3 regions for 4 patches",
    );
    fails(
        &|f| {
            p(f).tensors.remove(2);
        },
        "does not list its split tensor `b`",
    );
    fails(
        &|f| {
            p(f).tensors.remove(1);
        },
        "op 0 (MAX_POOL_2D) of the patch stage of model `patches` uses tensor `a`, which the patch stage does not list",
    );
    fails(
        &|f| f.tensors[1].shape = vec![8, 8, 1],
        "tensor `a` of the patch stage of model `patches` has shape [8, 8, 1]",
    );
    fails(
        &|f| f.ops[2].inputs = vec![Some(1)],
        "op 2 (RELU) of model `patches` runs after the patch stage but uses its tensor `a`",
    );
    fails(
        &|f| f.outputs[0].tensor = 1,
        "model output `y` of model `patches` is a tensor of the patch stage",
    );
    fails(
        &|f| {
            let t = p(f).tensors[1].clone();
            p(f).tensors.push(t);
        },
        "lists tensor `a` twice",
    );
    fails(
        &|f| {
            f.ops[0].in_place = Some(planner::planfile::InPlaceEntry {
                input: 0,
                output: 0,
                temp: None,
                rows: false,
            });
        },
        "op 0 (MAX_POOL_2D) of model `patches` cannot run in the patch stage (ops 0..=1): it runs in place, and in-place kernels run on whole tensors only",
    );
    fails(
        &|f| f.ops[1].opcode = "SOFTMAX".into(),
        "op 1 (SOFTMAX) of model `patches` cannot run in the patch stage (ops 0..=1): SOFTMAX ops do not run on patch regions",
    );
    fails(
        &|f| f.tensors[2].dtype = planner::graph::DType::F32,
        "op 1 (MAX_POOL_2D) of model `patches` cannot run in the patch stage (ops 0..=1): its output is f32",
    );
    fails(
        &|f| {
            p(f).input = planner::planfile::patch::PatchInput::Streamed;
            p(f).tensors.remove(0);
            f.ops[0].inputs = vec![Some(1)];
        },
        "streams its input, but it reads 0 model inputs",
    );
}

/// A prepared input must be an input of its op, a constant i32 `[3, c_out]` of a kind that
/// reads requant-v1, in a plan for a set that prepares; kernel scratch positions must name
/// the op's scratch tensors, once.
#[test]
fn prepared_inputs_and_kernel_scratch_are_checked() {
    use planner::graph::TensorKind;
    use planner::planfile::{KernelSet, PreparedEntry, PreparedLayout};
    let (g, p, l) = planner::planfile::fixture::tiny();
    let mut f = PlanFile::from_plan(&g, &p, &l).unwrap();
    // Op 1 (FULLY_CONNECTED, output `out` of 4 channels) gets a requant-v1 input 3.
    let channels = *f.tensors[6].shape.last().unwrap();
    let mut t = f.tensors[5].clone();
    t.id = "out/requant".into();
    t.dtype = DType::I32;
    t.shape = vec![3, channels];
    t.size = 12 * channels;
    f.tensors.push(t);
    f.ops[1].inputs.push(Some(7));
    f.ops[1].prepared = Some(PreparedEntry {
        layout: PreparedLayout::RequantV1,
        input: 3,
    });
    f.kernels = KernelSet::Optimized;
    assert_eq!(check_prepared(&f), Ok(()));
    let refused = |edit: &dyn Fn(&mut PlanFile)| {
        let mut bad = f.clone();
        edit(&mut bad);
        check_prepared(&bad).unwrap_err()
    };
    let e = refused(&|b| b.kernels = KernelSet::Reference);
    assert!(e.contains("op 1 (FULLY_CONNECTED) of model `tiny` has a prepared input, but the plan is for the reference kernel set"), "{e}");
    let e = refused(&|b| b.ops[1].prepared.as_mut().unwrap().input = 4);
    assert!(
        e.contains("is prepared with input #4, but it has 4 inputs"),
        "{e}"
    );
    let e = refused(&|b| b.ops[1].inputs[3] = None);
    assert!(e.contains("or that one is left out"), "{e}");
    let e = refused(&|b| b.tensors[7].shape = vec![6, 2]);
    assert!(
        e.contains("requant-v1 input #3 `out/requant` (constant i32 [6, 2]); it must be a constant i32 [3, 4]"),
        "{e}"
    );
    let e = refused(&|b| b.tensors[7].dtype = DType::F32);
    assert!(e.contains("(constant f32 [3, 4])"), "{e}");
    let e = refused(&|b| b.tensors[7].kind = TensorKind::Activation);
    assert!(e.contains("(activation i32 [3, 4])"), "{e}");
    let e = refused(&|b| b.ops[1].opcode = "ADD".into());
    assert!(e.contains("op 1 (ADD) of model `tiny` is prepared with requant-v1, which only CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED ops read"), "{e}");
    let e = refused(&|b| b.ops[0].kernel_scratch = vec![0]);
    assert!(e.contains("op 0 (FULLY_CONNECTED) of model `tiny` lists scratch #0 as kernel scratch, but it has 0 scratch tensors"), "{e}");
    let e = refused(&|b| {
        b.ops[0].scratch = vec![3];
        b.ops[0].kernel_scratch = vec![0, 0];
    });
    assert!(e.contains("lists that one twice"), "{e}");
}
