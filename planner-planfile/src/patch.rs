//! How a model's first stage runs patch by patch (since version 3): [`PatchPlan`].
//!
//! The planner may split a vision model after a spatially local op (the *split op*): the
//! ops up to it (the *stage*: convolutions, depthwise convolutions, pooling, `PAD`,
//! elementwise and unary ops) run once per patch of a grid over the split op's output, each
//! on the region of its tensors that patch needs (receptive fields traced back through
//! kernel, stride, dilation and padding, clipped at the tensor's border), so the stage's
//! large activations never exist whole. The split op's output is kept whole; the ops after
//! it run per layer as usual.
//!
//! In the plan file, the stage is the first ops in plan order (`ops[0..=split]`); each
//! tensor the stage writes (and the model input, when it is streamed) is placed once with
//! the size of its largest region ([`TensorEntry::size`](crate::TensorEntry::size)), and
//! every patch reuses those bytes. The generated `run()` loops over the patches, calls
//! each stage op with [`Region`](planner_rt::kernel::Region) views, then runs the rest.

use serde::{Deserialize, Serialize};

/// The patch-based execution of a model's first stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatchPlan {
    /// Index into [`PlanFile::ops`](crate::PlanFile::ops) of the split op, the stage's
    /// last op; its output 0 is the split tensor, kept whole.
    pub split: u32,
    /// The patch grid `[rows, columns]` over the split tensor's height and width.
    pub grid: [u32; 2],
    /// How the model input reaches the stage.
    pub input: PatchInput,
    /// Every tensor a stage op reads or writes (activations only; weights are read whole),
    /// with its region in each patch; the split tensor's regions are the patches' tiles.
    pub tensors: Vec<PatchTensor>,
    /// Multiply-accumulates of one run per layer (the stage counted once).
    pub macs: u64,
    /// Multiply-accumulates of one run with patches (halos recomputed).
    pub patch_macs: u64,
}

/// How the model input reaches a patch stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchInput {
    /// The input tensor is whole in the arena; each patch reads its region of it.
    Resident,
    /// The input tensor is placed with the size of its largest region; before each patch,
    /// the user's callback fills that region (a camera frame never sits whole in RAM).
    Streamed,
}

/// One tensor of a patch stage and its region per patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatchTensor {
    /// Index into [`PlanFile::tensors`](crate::PlanFile::tensors).
    pub tensor: u32,
    /// `[top, left, height, width]` per patch, patches row by row over the grid; the
    /// tensor is `[1, H, W, C]`, and a region's elements are stored row after row from the
    /// tensor's offset (see [`Region`](planner_rt::kernel::Region)).
    pub regions: Vec<[u32; 4]>,
}

impl PatchPlan {
    /// Elements a dense stage tensor `t` of `shape` takes (its largest region's pixels
    /// times its channels); `None` for a tensor sized by its shape: not in the stage, the
    /// split tensor, or a resident input (`split` is the split tensor, `inputs` the model's
    /// inputs).
    pub fn dense_elements(
        &self,
        t: u32,
        split: Option<u32>,
        inputs: &[u32],
        shape: &[u64],
    ) -> Option<u64> {
        let entry = self.tensor(t)?;
        if Some(t) == split || (self.input == PatchInput::Resident && inputs.contains(&t)) {
            return None;
        }
        let c = shape.last().copied().unwrap_or(1);
        let px = entry
            .regions
            .iter()
            .map(|r| r[2] as u64 * r[3] as u64)
            .max()
            .unwrap_or(0);
        Some(px.saturating_mul(c))
    }

    /// Number of patches.
    pub fn patches(&self) -> usize {
        self.grid[0] as usize * self.grid[1] as usize
    }

    /// The entry of tensor `tensor`, when the stage uses it.
    pub fn tensor(&self, tensor: u32) -> Option<&PatchTensor> {
        self.tensors.iter().find(|t| t.tensor == tensor)
    }
}

/// Whether an op of kind `opcode` whose output 0 holds `output` elements may run in a patch
/// stage (in place over one of its inputs when `in_place`): `Err` with the reason, worded
/// to follow "op 3 (RELU) ... cannot run in a patch stage: ". The one rule the planner, its
/// verifier and `include_model!` apply, so a plan the planner writes runs with the
/// reference kernels:
///
/// - the kernels compute the kind's output region from input regions (its row of the
///   op-kind table, [`planner_rt::op_kinds::OP_KINDS`], says `regions`:
///   `planner_kernels::Reference` runs it on regions, on its integer paths);
/// - its output is not `f32`, except for `DEQUANTIZE` (the float32 kernels run on whole
///   tensors only; `QUANTIZE` from `f32` and `DEQUANTIZE` to it run on regions);
/// - it does not run in place (the in-place kernels run on whole tensors only).
pub fn stage_op(opcode: &str, output: crate::DType, in_place: bool) -> Result<(), String> {
    let regions = planner_rt::op_kinds::OpKind::of(opcode).is_some_and(|k| k.regions);
    if !regions {
        return Err(format!(
            "{opcode} ops do not run on patch regions (a stage holds {})",
            planner_rt::op_kinds::OpKind::names(|k| k.regions)
        ));
    }
    if output == crate::DType::F32 && opcode != "DEQUANTIZE" {
        return Err(format!(
            "its output is f32, and the float32 {opcode} kernel runs on whole tensors only"
        ));
    }
    if in_place {
        return Err("it runs in place, and in-place kernels run on whole tensors only".into());
    }
    Ok(())
}
