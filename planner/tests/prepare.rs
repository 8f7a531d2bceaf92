//! `[kernels] set = "optimized"` on every bundled model: each int8 convolution and
//! fully-connected op gets its `requant-v1` constant as input 3, whose values are checked
//! here against sums and multipliers computed from the model's own tensors, independently of
//! `planner::rt::prepare`; each int8 `CONV_2D` with a window or a stride gets its kernel
//! scratch, live at its op only; the plan file lists both; the reference set adds nothing.

mod common;

use planner::graph::{DType, Graph, KernelSet, Op, OpOptions, Tensor, TensorKind};
use planner::manifest::Manifest;
use planner::planfile::{BuildPlanFile, Layout, PlanFile, PreparedEntry, PreparedLayout};

use common::{bundled_models, root};

fn i8s(t: &Tensor) -> Vec<i64> {
    t.data
        .as_ref()
        .unwrap()
        .iter()
        .map(|&b| i64::from(b as i8))
        .collect()
}

fn i32s(t: &Tensor) -> Vec<i64> {
    t.data
        .as_ref()
        .unwrap()
        .chunks(4)
        .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect()
}

/// `real` as a Q31 mantissa in `[2^30, 2^31)` and a power of two, found by scaling with
/// exact powers of two (no bit manipulation), rounded half away from zero.
fn q31(real: f64) -> (i64, i64) {
    if !(real > 0.0 && real.is_finite()) {
        return (0, 0);
    }
    let mut shift = real.log2().floor() as i32 + 1;
    while real >= 2f64.powi(shift) {
        shift += 1;
    }
    while real < 2f64.powi(shift - 1) {
        shift -= 1;
    }
    let mut q = (real * 2f64.powi(31 - shift)).round() as i64;
    if q == 1 << 31 {
        q /= 2;
        shift += 1;
    }
    if shift < -31 {
        return (0, 0);
    }
    (q, i64::from(shift))
}

fn tensor<'g>(g: &'g Graph, op: &Op, i: usize) -> Option<&'g Tensor> {
    Some(g.tensor(op.inputs.get(i).copied().flatten()?))
}

/// The `[3, c_out]` rows op `op` of the imported graph `g` should get, or `None` when the
/// op is not one the optimized set prepares.
fn expected(g: &Graph, op: &Op) -> Option<Vec<i64>> {
    let depthwise = match (op.opcode.as_str(), &op.options) {
        ("CONV_2D", OpOptions::Conv2d(_)) | ("FULLY_CONNECTED", OpOptions::FullyConnected(_)) => {
            false
        }
        ("DEPTHWISE_CONV_2D", OpOptions::DepthwiseConv2d(_)) => true,
        _ => return None,
    };
    let (x, w, y) = (
        tensor(g, op, 0)?,
        tensor(g, op, 1)?,
        g.tensor(op.outputs[0]),
    );
    let int8 = [x.dtype, w.dtype, y.dtype] == [DType::I8; 3];
    let wq = w.quantization.as_ref()?;
    if !int8 || w.kind != TensorKind::Constant || wq.zero_point.iter().any(|&z| z != 0) {
        return None;
    }
    let bias = match tensor(g, op, 2) {
        Some(b) if b.dtype == DType::I32 && b.kind == TensorKind::Constant => Some(i32s(b)),
        Some(_) => return None,
        None => None,
    };
    let filter = i8s(w);
    let c_out = if depthwise { w.shape[3] } else { w.shape[0] } as usize;
    let per = filter.len() / c_out;
    let (xq, yq) = (x.quantization.as_ref()?, y.quantization.as_ref()?);
    let zx = xq.zero_point[0];
    let mut rows = vec![0i64; 3 * c_out];
    for c in 0..c_out {
        let sum: i64 = (0..per)
            .map(|j| {
                if depthwise {
                    filter[j * c_out + c]
                } else {
                    filter[c * per + j]
                }
            })
            .sum();
        let b = bias.as_ref().map_or(0, |b| b[c]);
        rows[c] = i64::from((b - zx * sum) as i32);
        let fs = wq.scale[if wq.scale.len() == 1 { 0 } else { c }];
        let real = f64::from(xq.scale[0]) * f64::from(fs) / f64::from(yq.scale[0]);
        (rows[c_out + c], rows[2 * c_out + c]) = q31(real);
    }
    Some(rows)
}

/// `4 · fh · fw · c` for an int8 `CONV_2D` with a window or a stride.
fn scratch_bytes(g: &Graph, op: &Op) -> Option<u64> {
    if op.opcode == "UNIDIRECTIONAL_SEQUENCE_LSTM" {
        // An int8 LSTM: per unit and gate two int32 sums and the gate's value, and one
        // recurrent product per unit (the forget weights' rows are the units).
        let (x, w) = (tensor(g, op, 0)?, tensor(g, op, 2)?);
        return ([x.dtype, w.dtype] == [DType::I8; 2]).then(|| 13 * 4 * w.shape[0]);
    }
    let OpOptions::Conv2d(o) = &op.options else {
        return None;
    };
    let (x, w, y) = (
        tensor(g, op, 0)?,
        tensor(g, op, 1)?,
        g.tensor(op.outputs[0]),
    );
    if [x.dtype, w.dtype, y.dtype] != [DType::I8; 3] {
        return None;
    }
    let [_, fh, fw, c] = w.shape[..] else {
        return None;
    };
    // Every filter but a 1x1 one without explicit padding runs through im2col rows: four
    // of them.
    let padded = o.padding == planner::rt::options::Padding::Explicit
        && o.pads.as_slice().iter().any(|&p| p != 0);
    (fh * fw > 1 || padded).then_some(4 * fh * fw * c)
}

#[test]
fn bundled_models_get_their_constants_and_kernel_scratch() {
    let (mut constants, mut scratch) = (0, 0);
    for path in bundled_models(&root()) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut m = Manifest::for_model_file(&path);
        let imported = planner::import::load(&m).unwrap();
        let reference = planner::plan_graph(&m, &imported).unwrap();
        assert_eq!(
            reference.graph.tensors.len(),
            imported.tensors.len(),
            "{name}"
        );
        assert!(reference.graph.prepared.is_empty(), "{name}");
        m.kernels = KernelSet::Optimized;
        let p = planner::plan_graph(&m, &imported).unwrap();
        let g = &p.graph;
        assert_eq!(g.kernels, KernelSet::Optimized);
        let file = PlanFile::from_plan(g, &p.plan, &Layout::of(&m)).unwrap();
        assert_eq!(file.kernels, KernelSet::Optimized);
        let back = PlanFile::parse(std::str::from_utf8(&file.to_bytes()).unwrap(), &name);
        assert_eq!(back.unwrap(), file, "{name}");
        for (k, (model_op, op)) in imported.ops.iter().zip(&g.ops).enumerate() {
            let at = format!("{name} op {k} ({})", op.opcode);
            let entry = &file.ops[k];
            match expected(&imported, model_op) {
                Some(rows) => {
                    constants += 1;
                    let t = g.tensor(op.inputs[3].unwrap());
                    assert_eq!(t.shape, vec![3, rows.len() as u64 / 3], "{at}");
                    assert_eq!(i32s(t), rows, "{at}");
                    assert!(t.id.ends_with("/requant"), "{at}: {}", t.id);
                    let binding = p.plan.binding(&t.id).unwrap();
                    assert_eq!(binding.role, planner::plan::ArenaRole::Constant, "{at}");
                    let prepared = PreparedEntry {
                        layout: PreparedLayout::RequantV1,
                        input: 3,
                    };
                    assert_eq!(entry.prepared, Some(prepared), "{at}");
                }
                None => {
                    assert_eq!(op.inputs.len(), model_op.inputs.len(), "{at}");
                    assert_eq!(entry.prepared, None, "{at}");
                }
            }
            match scratch_bytes(&imported, model_op) {
                Some(bytes) => {
                    scratch += 1;
                    let t = g.tensor(op.scratch[0]);
                    assert_eq!(t.size, bytes, "{at}");
                    let want = if op.opcode.starts_with("UNIDIRECTIONAL") {
                        (DType::I32, bytes / 4)
                    } else {
                        (DType::I8, bytes)
                    };
                    assert_eq!((t.dtype, t.shape.clone()), (want.0, vec![want.1]), "{at}");
                    assert_eq!(op.scratch.len(), model_op.scratch.len() + 1, "{at}");
                    let lt = &p.plan.tensor_lifetimes[&t.id];
                    assert_eq!((lt.start_op, lt.end_op), (k as u32, k as u32), "{at}");
                    assert_eq!(p.plan.binding(&t.id).unwrap().offset % 4, 0, "{at}");
                    assert_eq!(entry.kernel_scratch, vec![0], "{at}");
                }
                None => {
                    assert_eq!(op.scratch.len(), model_op.scratch.len(), "{at}");
                    assert!(entry.kernel_scratch.is_empty(), "{at}");
                }
            }
        }
    }
    // Every bundled model has some (the KWS, VWW and image models many).
    assert!(constants >= 200, "{constants} ops prepared");
    // Only convolutions run through im2col rows (1x1 ones without padding run as a GEMM) and
    // int8 LSTMs get scratch: 12 over the bundled models.
    assert!(scratch >= 12, "{scratch} kernel scratch buffers");
}

/// The multiplier the test computes agrees with the runtime's on values whose split is
/// known, so the comparison above tests the planner and not this file.
#[test]
fn the_independent_split_is_right() {
    assert_eq!(q31(0.5), (1 << 30, 0));
    assert_eq!(q31(0.375), (3 << 29, -1));
    assert_eq!(q31(1.0), (1 << 30, 1));
    assert_eq!(q31(1.0 - 1e-12), (1 << 30, 1));
    assert_eq!(q31(0.0), (0, 0));
}

/// The reports of a plan for the optimized set show the set, the prepared constants, the
/// kernel scratch and what the reference set would need; the SVG draws the kernel scratch;
/// a reference plan's reports say nothing of kernels.
#[test]
fn reports_show_the_kernel_set() {
    use planner::report;
    let load = |rel: &str| planner::manifest::load(&root().join(rel)).unwrap();
    let p = planner::plan(&load("examples/kws/optimized.toml")).unwrap();
    let line = "kernels: optimized · prepared constants: 10 ops, 7056 bytes · kernel scratch: 1 op, 160 bytes; the reference set needs none\n";
    let table = report::table(&p, &p.graph);
    assert!(table.contains(line), "{table}");
    let explain = report::explain(&p, &p.graph, None);
    assert!(explain.contains(line), "{explain}");
    assert!(
        explain.contains("prepared: op 0 (CONV_2D) reads `22/requant` (requant-v1, 768 bytes) as input 3; kernel scratch `22/kernel_scratch` (160 bytes) as scratch 0\n"),
        "{explain}"
    );
    let json: serde_json::Value = serde_json::from_str(&report::json(&p)).unwrap();
    let k = &json["kernels"];
    assert_eq!(k["set"], "optimized");
    assert_eq!(
        (k["prepared_ops"].as_u64(), k["prepared_bytes"].as_u64()),
        (Some(10), Some(7056))
    );
    assert_eq!(k["kernel_scratch"]["largest"], 160);
    assert_eq!(k["other_set"], "reference");
    assert_eq!(k["other_set_kernel_scratch"]["bytes"], 0);
    let rows = report::explain_rows(&p, None);
    assert_eq!(rows[0].last().map(String::as_str), Some("kernels"));
    let role = |id: &str| {
        rows.iter()
            .find(|r| r[1] == id)
            .and_then(|r| r.last())
            .cloned()
    };
    assert_eq!(
        role("22/kernel_scratch").as_deref(),
        Some("kernel scratch 0 of op 0")
    );
    assert_eq!(
        role("33/requant").as_deref(),
        Some("requant-v1 input 3 of op 11")
    );
    assert_eq!(role("22").as_deref(), Some(""));
    let svg = planner::export::svg::svg(&p);
    assert!(
        svg.contains("22/kernel_scratch"),
        "the SVG draws the kernel scratch"
    );

    let r = planner::plan(&load("examples/kws/kws.toml")).unwrap();
    assert!(report::kernel_figures(&r).is_none());
    for text in [
        report::table(&r, &r.graph),
        report::explain(&r, &r.graph, None),
        report::json(&r),
    ] {
        assert!(!text.contains("kernel"), "{text}");
    }
    assert_ne!(
        report::explain_rows(&r, None)[0].last().map(String::as_str),
        Some("kernels")
    );
}

/// A group's models share the set: each model's table has its line, and the group's CSV
/// rows end with their model's figures (a reference group's CSV has no such columns).
#[test]
fn group_reports_show_the_kernel_set() {
    let path = root().join("planner/tests/data/groups/kws_vww.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let reference = planner::manifest::Group::parse(&text, &path).unwrap();
    let csv = planner::report::group_csv(&planner::plan_group(&reference).unwrap());
    assert!(
        csv.starts_with("arena,role,memory,arena_bytes,model,base,bytes\n"),
        "{csv}"
    );
    let text = format!("{text}\n[kernels]\nset = \"optimized\"\n");
    let group = planner::manifest::Group::parse(&text, &path).unwrap();
    let planned = planner::plan_group(&group).unwrap();
    let csv = planner::report::group_csv(&planned);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "arena,role,memory,arena_bytes,model,base,bytes,kernels,prepared_bytes,kernel_scratch_bytes,kernel_scratch_largest,other_set_kernel_scratch_bytes"
        )
    );
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), 12, "{line}");
        assert_eq!(cells[7], "optimized", "{line}");
        assert!(cells[8].parse::<u64>().unwrap() > 0, "{line}");
        assert_eq!(cells[11], "0", "{line}");
    }
    let table = planner::report::group_table(&planned);
    assert_eq!(table.matches("kernels: optimized").count(), 2, "{table}");
}
