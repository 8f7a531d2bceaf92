//! What `tests/ops.rs` and `tests/ops_optimized.rs` share: every op's output of every
//! bundled model and of the one-op models of `single/`, run with one kernel set, compared
//! with TFLite Micro's per-op goldens (`goldens/ops/`). See `tests/ops.rs`.

use std::fmt::Write as _;
use std::path::PathBuf;

use planner::planfile::PlanFile;
use run_models::align::Misaligned;
use run_models::{
    CONTROL_FLOW, MODELS, MODELS_IN_PLACE, MODELS_ROWS, Record, Runner, SINGLE_OPS, Set, fnv1a64,
    unhex,
};
use serde_json::Value;

/// Models whose op outputs differ from TFLM's today, with the op kind that differs first:
/// the work list of issue 25. The test fails when one of them becomes exact (take it out)
/// or another model differs.
const DIFFER_TODAY: &[(&str, &str)] = &[];

/// One-op models whose float32 outputs of one kind may differ from TFLM's by one ulp per
/// element, and no more: TFLM on a Linux host calls glibc's `sinf` and `cosf`, which are
/// not correctly rounded, and the kernels call `libm`'s, which differ from glibc 2.36's by
/// one ulp on 0.13 % (`sin`) and 0.08 % (`cos`) of the arguments in [-100, 100] (every 7th
/// bit pattern). The report counts the outputs that differ so.
const WITHIN_ONE_ULP: &[(&str, &str)] = &[("op_b3_sin_f32", "SIN"), ("op_b3_cos_f32", "COS")];

/// Whether `ours` differs from the golden output `want` by at most one ulp per element,
/// for a model and kind of [`WITHIN_ONE_ULP`] (and a golden that has TFLM's bytes).
fn within_one_ulp(model: &str, opcode: &str, ours: &[u8], want: &Value) -> bool {
    if !WITHIN_ONE_ULP.contains(&(golden_name(model), opcode)) || want["dtype"] != "float32" {
        return false;
    }
    let Some(theirs) = want["hex"].as_str().map(unhex) else {
        return false;
    };
    let bits = |b: &[u8]| i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    ours.len() == theirs.len()
        && ours
            .chunks_exact(4)
            .zip(theirs.chunks_exact(4))
            .all(|(a, b)| (bits(a) - bits(b)).abs() <= 1)
}

/// FNV-1a 32 of `bytes`: the golden's block digests.
fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// Bytes per element of a golden dtype.
fn width(dtype: &str) -> usize {
    match dtype {
        "int8" | "uint8" | "bool" => 1,
        "int16" | "uint16" | "float16" => 2,
        "int64" | "uint64" | "float64" => 8,
        _ => 4,
    }
}

/// Element `e` of `bytes` as `dtype`, written out.
fn element(bytes: &[u8], dtype: &str, e: usize) -> String {
    let w = width(dtype);
    let Some(b) = bytes.get(e * w..(e + 1) * w) else {
        return "(none)".into();
    };
    match dtype {
        "int8" => (b[0] as i8).to_string(),
        "uint8" | "bool" => b[0].to_string(),
        "int16" => i16::from_le_bytes([b[0], b[1]]).to_string(),
        "int32" => i32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_string(),
        "float32" => f32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_string(),
        _ => format!("{b:02x?}"),
    }
}

/// Where `ours` first differs from the golden output `want` (which differs): the element,
/// ours against TFLM's when the golden (or a dump, `TFLM_OP_DUMP`) has TFLM's bytes.
fn first_difference(ours: &[u8], want: &Value, dump: Option<PathBuf>) -> String {
    let dtype = want["dtype"].as_str().unwrap_or("");
    let w = width(dtype);
    let theirs = want["hex"]
        .as_str()
        .map(unhex)
        .or_else(|| dump.and_then(|p| std::fs::read(p).ok()));
    if let Some(theirs) = theirs {
        let at = ours
            .iter()
            .zip(&theirs)
            .position(|(a, b)| a != b)
            .unwrap_or(ours.len().min(theirs.len()));
        let e = at / w;
        let count = ours
            .chunks(w)
            .zip(theirs.chunks(w))
            .filter(|(a, b)| a != b)
            .count();
        return format!(
            "element {e}: ours {}, TFLM {} ({count} of {} elements differ{})",
            element(ours, dtype, e),
            element(&theirs, dtype, e),
            theirs.len() / w,
            if ours.len() == theirs.len() {
                String::new()
            } else {
                format!("; {} bytes, TFLM's {}", ours.len(), theirs.len())
            }
        );
    }
    let block = want["blocks"].as_str().unwrap_or("");
    let size = 1024;
    let blocks: Vec<&str> = (0..block.len() / 8)
        .map(|k| &block[8 * k..8 * k + 8])
        .collect();
    let differing: Vec<usize> = ours
        .chunks(size)
        .zip(&blocks)
        .enumerate()
        .filter(|(_, (c, d))| format!("{:08x}", fnv1a32(c)) != **d)
        .map(|(k, _)| k)
        .collect();
    match differing.first() {
        Some(&k) => format!(
            "elements {}..{} (block {k}; {} of {} blocks differ): ours from there {:?}; \
             TFLM's values of outputs over 2048 bytes are not stored: run \
             `scripts/tflm_op_goldens.py --dump DIR` and set TFLM_OP_DUMP=DIR for them",
            k * size / w,
            ((k + 1) * size).min(ours.len()) / w,
            differing.len(),
            blocks.len(),
            (k * size / w..((k + 1) * size).min(ours.len()) / w)
                .take(8)
                .map(|e| element(ours, dtype, e))
                .collect::<Vec<_>>()
        ),
        None => format!(
            "its length: {} bytes, TFLM's {} blocks",
            ours.len(),
            blocks.len()
        ),
    }
}

/// What one model gave against its goldens.
struct Outcome {
    /// Op outputs compared, over all runs.
    compared: usize,
    /// Op outputs that differ, over all runs.
    differing: usize,
    /// Op outputs within one ulp of TFLM's ([`WITHIN_ONE_ULP`]), not counted as differing.
    one_ulp: usize,
    /// The op kinds with a differing output.
    kinds: std::collections::BTreeSet<String>,
    /// The first difference, written out, with its op kind.
    first: Option<(String, String)>,
    /// Distinct model outputs over the runs.
    distinct: usize,
    /// Golden ops (PADs) the plan folded away.
    folded: usize,
    /// Compared ops whose outputs the golden marks informative (`informative_ops`: they
    /// differ between the runs and none is all at the int8 or int16 extremes).
    informative: usize,
    /// Ops compared (per run).
    ops: usize,
}

/// The golden of a model planned in place or with row overlap is its classic plan's (same
/// model, same TFLM run).
fn golden_name(name: &str) -> &str {
    [IN_PLACE, ROWS]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(name)
}

/// The suffix of the models of [`MODELS_IN_PLACE`].
const IN_PLACE: &str = "_in_place";

/// The suffix of the models of [`MODELS_ROWS`].
const ROWS: &str = "_rows";

/// The plan op of each golden op ([`run_models::align::align`]).
fn align(model: &str, plan: &PlanFile, ops: &[Value]) -> Vec<Option<usize>> {
    match run_models::align::align(plan, ops) {
        Ok(at) => at,
        Err(Misaligned::Op {
            golden,
            opcode,
            tensor,
            plan_op,
        }) => panic!(
            "{model}: golden op {golden} ({opcode}, output `{tensor}`) is not plan op {plan_op} \
             ({:?}), and only PADs are folded away",
            plan.ops.get(plan_op).map(|o| o.opcode.as_str())
        ),
        Err(Misaligned::LeftOver { .. }) => {
            panic!("{model}: plan ops left over after the golden's")
        }
    }
}

fn compare(model: &dyn Runner, set: Set) -> Result<Outcome, String> {
    let g = run_models::golden_json(
        &format!("ops/{}", golden_name(model.name())),
        "scripts/tflm_op_goldens.py",
    );
    let text = std::str::from_utf8(model.plan_file()).unwrap();
    let plan = PlanFile::parse(text, model.name()).unwrap();
    let mut outcome = Outcome {
        compared: 0,
        differing: 0,
        one_ulp: 0,
        kinds: Default::default(),
        first: None,
        distinct: 0,
        folded: 0,
        informative: 0,
        ops: 0,
    };
    let informative_ops = g["informative_ops"].as_array().ok_or_else(|| {
        format!(
            "{}: the golden has no `informative_ops`; rewrite it with scripts/tflm_op_goldens.py",
            model.name()
        )
    })?;
    let mut finals = std::collections::BTreeSet::new();
    for (r, run) in g["runs"].as_array().unwrap().iter().enumerate() {
        let inputs = run_models::run_inputs(&g, r, run_models::OPS_SALT);
        let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let mut record = Record::default();
        let outputs = model.run(&refs, set, &mut record)?;
        finals.insert(outputs);
        let ops = run["ops"].as_array().unwrap();
        if !plan.control.is_empty() {
            named_outputs(
                model.name(),
                &plan,
                &record,
                ops,
                r,
                informative_ops,
                &mut outcome,
            );
            continue;
        }
        // Ops are the golden's one for one, except PADs the in-place plan folded away.
        let at = align(model.name(), &plan, ops);
        if !model.name().ends_with(IN_PLACE) {
            assert_eq!(
                ops.len(),
                plan.ops.len(),
                "{}: the golden has {} ops, the plan {}",
                model.name(),
                ops.len(),
                plan.ops.len()
            );
        }
        outcome.folded = at.iter().filter(|k| k.is_none()).count();
        for (g_op, (want, k)) in ops.iter().zip(at).enumerate() {
            let Some(k) = k else { continue };
            if r == 0 {
                outcome.ops += 1;
                if informative_ops.get(g_op).and_then(Value::as_bool) == Some(true) {
                    outcome.informative += 1;
                }
            }
            let op = &plan.ops[k];
            let opcode = want["opcode"].as_str().unwrap();
            assert_eq!(opcode, op.opcode, "{}: op {k}", model.name());
            for (j, want) in want["outputs"].as_array().unwrap().iter().enumerate() {
                let tensor = want["tensor"].as_str().unwrap_or("");
                // An unnamed tensor has the empty name in the golden, its index in the plan.
                if let Some(&t) = op.outputs.get(j).filter(|_| !tensor.is_empty()) {
                    assert_eq!(
                        plan.tensors[t as usize].name,
                        tensor,
                        "{}: op {k} output {j}",
                        model.name()
                    );
                }
                let ours = record.output(k, j);
                outcome.compared += 1;
                if fnv1a64(ours) == want["fnv1a64"].as_str().unwrap() {
                    continue;
                }
                if within_one_ulp(model.name(), opcode, ours, want) {
                    outcome.one_ulp += 1;
                    continue;
                }
                outcome.differing += 1;
                outcome.kinds.insert(opcode.to_string());
                if outcome.first.is_none() {
                    let dump = std::env::var_os("TFLM_OP_DUMP").map(|d| {
                        PathBuf::from(d)
                            .join(model.name())
                            .join(r.to_string())
                            .join(format!("{k}_{j}.bin"))
                    });
                    let mut s = String::new();
                    let _ = write!(
                        s,
                        "{} run {r}: op {k} ({opcode}) output {j} (tensor `{tensor}`) differs first, at {}",
                        model.name(),
                        first_difference(ours, want, dump)
                    );
                    outcome.first = Some((s, opcode.to_string()));
                }
            }
        }
    }
    outcome.distinct = finals.len();
    Ok(outcome)
}

/// The bytes the last op (in plan order) that wrote the plan tensor named `tensor` left in
/// this run, `None` when no op wrote it.
fn last_written<'r>(plan: &PlanFile, record: &'r Record, tensor: &str) -> Option<&'r [u8]> {
    let t = plan.tensors.iter().position(|x| x.name == tensor)? as u32;
    plan.ops.iter().enumerate().rev().find_map(|(k, op)| {
        let j = op.outputs.iter().position(|&o| o == t)?;
        Some(record.output(k, j)).filter(|b| !b.is_empty())
    })
}

/// For a plan with control flow, whose op list holds every subgraph's ops (its ops are not
/// the golden's, which are subgraph 0's): each golden op output against the plan tensor of
/// its name as the last op that wrote it in run `r` left it (in a loop, the last pass; of an
/// IF, the branch that ran).
fn named_outputs(
    model: &str,
    plan: &PlanFile,
    record: &Record,
    ops: &[Value],
    r: usize,
    informative_ops: &[Value],
    outcome: &mut Outcome,
) {
    for (g_op, want) in ops.iter().enumerate() {
        let opcode = want["opcode"].as_str().unwrap();
        let outputs = want["outputs"].as_array().unwrap();
        if r == 0 && !outputs.is_empty() {
            outcome.ops += 1;
            if informative_ops.get(g_op).and_then(Value::as_bool) == Some(true) {
                outcome.informative += 1;
            }
        }
        for (j, want) in outputs.iter().enumerate() {
            let tensor = want["tensor"].as_str().unwrap_or("");
            let ours = last_written(plan, record, tensor).unwrap_or_else(|| {
                panic!("{model} run {r}: no op of the plan wrote `{tensor}` (golden op {g_op}, {opcode})")
            });
            outcome.compared += 1;
            if fnv1a64(ours) == want["fnv1a64"].as_str().unwrap() {
                continue;
            }
            outcome.differing += 1;
            outcome.kinds.insert(opcode.to_string());
            if outcome.first.is_none() {
                outcome.first = Some((
                    format!(
                        "{model} run {r}: golden op {g_op} ({opcode}) output {j} (tensor `{tensor}`) differs first, at {}",
                        first_difference(ours, want, None)
                    ),
                    opcode.to_string(),
                ));
            }
        }
    }
}

fn compare_all<'a>(models: impl Iterator<Item = &'a &'a (dyn Runner + Sync)>, set: Set) {
    let mut report = Vec::new();
    let mut unexpected = Vec::new();
    for model in models {
        let name = model.name();
        let known = DIFFER_TODAY.iter().find(|(m, _)| *m == golden_name(name));
        match compare(*model, set) {
            Err(e) => {
                assert!(!model.supported(), "{name}: {e}");
                report.push(format!("{name}: not run ({e})"));
            }
            Ok(o) => {
                report.push(format!(
                    "{name}: {} of {} op outputs differ over 3 runs (kinds {:?}), {} of {} ops compared informative, {} distinct model outputs, {} PADs folded{}{}",
                    o.differing,
                    o.compared,
                    o.kinds,
                    o.informative,
                    o.ops,
                    o.distinct,
                    o.folded,
                    if o.one_ulp > 0 {
                        format!(", {} within one ulp", o.one_ulp)
                    } else {
                        String::new()
                    },
                    o.first.as_ref().map(|(s, _)| format!("\n    {s}")).unwrap_or_default()
                ));
                if o.informative == 0 {
                    unexpected.push(format!(
                        "{name}: none of the {} ops compared has an informative output (the same \
                         for every golden input, or all at the int8/int16 extremes): the comparison \
                         proves little; give the model inputs that make its ops vary",
                        o.ops
                    ));
                }
                match (known, o.first) {
                    (None, Some((s, _))) => unexpected.push(s),
                    (Some((_, kind)), None) => unexpected.push(format!(
                        "{name} now matches TFLM on every op (first differed at {kind}): take it out of DIFFER_TODAY"
                    )),
                    (Some((_, kind)), Some((s, first))) if first != *kind => unexpected.push(
                        format!("{name} now differs first at {first}, not {kind}: {s}"),
                    ),
                    _ => {}
                }
            }
        }
    }
    println!("{} kernels:\n{}", set.name(), report.join("\n"));
    assert!(
        unexpected.is_empty(),
        "op outputs with the {} kernels differ from TFLite Micro's:\n{}",
        set.name(),
        unexpected.join("\n")
    );
}

/// Every op of every bundled model and one-op model, run with `set`.
pub fn every_op(set: Set) {
    assert!(SINGLE_OPS.len() >= 7, "{} one-op models", SINGLE_OPS.len());
    assert!(
        CONTROL_FLOW.len() >= 3,
        "{} control-flow models",
        CONTROL_FLOW.len()
    );
    compare_all(MODELS.iter().chain(SINGLE_OPS).chain(CONTROL_FLOW), set);
}

/// The models planned with `in_place = true` (PADs folded into their convolutions, ops run
/// in place) and with `row_overlap = true` (convolutions and pools writing their output rows
/// over input rows they have read), run with `set`: every op's output, and so every model
/// output, equal to TFLM's (which runs the PADs and every op out of place). Their handles are their own, so
/// their state (an SVDF's) starts at the first golden run too.
pub fn every_op_in_place(set: Set) {
    assert_eq!(MODELS_IN_PLACE.len(), MODELS.len());
    assert_eq!(MODELS_ROWS.len(), MODELS.len());
    compare_all(MODELS_IN_PLACE.iter().chain(MODELS_ROWS), set);
}
