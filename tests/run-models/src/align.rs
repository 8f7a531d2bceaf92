//! Which plan op each op of a TFLite Micro golden is: the same ops in order, told by the
//! opcode and the first output's name, except the PAD and PADV2 ops the planner folded into
//! their consumer. Used by the per-op golden test (`tests/ops.rs`) and by
//! `examples/firmware-m55`'s build script, which includes this file by `#[path]` (a build
//! script cannot depend on this test crate).

use planner::planfile::PlanFile;
use serde_json::Value;

/// Why the golden's ops are not the plan's.
#[derive(Debug)]
pub enum Misaligned<'g> {
    /// Golden op `golden` (its opcode and first output's name) is not plan op `plan_op`,
    /// and is no PAD the planner could have folded.
    Op {
        golden: usize,
        opcode: &'g str,
        tensor: &'g str,
        plan_op: usize,
    },
    /// The golden's ops matched only the first `matched` plan ops.
    LeftOver { matched: usize },
}

/// The plan op of each golden op of `ops` (a golden run's `ops`, in TFLite Micro's order),
/// `None` for a PAD or PADV2 folded into its consumer.
pub fn align<'g>(plan: &PlanFile, ops: &'g [Value]) -> Result<Vec<Option<usize>>, Misaligned<'g>> {
    let mut k = 0;
    let mut out = Vec::with_capacity(ops.len());
    for (g, want) in ops.iter().enumerate() {
        let opcode = want["opcode"].as_str().unwrap_or("");
        let tensor = want["outputs"][0]["tensor"].as_str().unwrap_or("");
        let same = plan.ops.get(k).is_some_and(|op| {
            op.opcode == opcode
                && (tensor.is_empty()
                    || op
                        .outputs
                        .first()
                        .and_then(|&t| plan.tensors.get(t as usize))
                        .is_some_and(|t| t.name == tensor))
        });
        if same {
            out.push(Some(k));
            k += 1;
        } else if matches!(opcode, "PAD" | "PADV2") {
            out.push(None);
        } else {
            return Err(Misaligned::Op {
                golden: g,
                opcode,
                tensor,
                plan_op: k,
            });
        }
    }
    if k != plan.ops.len() {
        return Err(Misaligned::LeftOver { matched: k });
    }
    Ok(out)
}
