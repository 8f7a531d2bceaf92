//! The tensors the importer adds to an op beyond the file's: the state TFLM's signal ops
//! keep between runs (variable tensors appended to the op's inputs) and the op-local scratch
//! the bundled kernels need (appended to the op's scratch), sized by the rules of
//! `planner::rt::op_kinds`.

use std::format;
use std::string::ToString;
use std::vec::Vec;

use super::Reader;
use crate::error::Result;
use crate::graph::{DType, Op, Tensor, TensorIndex, TensorKind};

impl Reader<'_, '_> {
    /// Appends to op `k`'s inputs one variable tensor per piece of state its kind keeps
    /// between runs outside its tensors (TFLM's persistent buffers: the rule is
    /// [`crate::rt::op_kinds::state`]), so the plan keeps it in a persistent arena and the
    /// kernel gets it as a variable. The tensors come after the file's own, named after the
    /// op's first output.
    pub(super) fn add_state(&self, k: usize, op: &mut Op, tensors: &mut Vec<Tensor>) -> Result<()> {
        if !crate::rt::op_kinds::keeps_state(&op.options) {
            return Ok(());
        }
        let input = op
            .inputs
            .first()
            .copied()
            .flatten()
            .and_then(|t| tensors.get(t.get()));
        let shape: Option<Vec<usize>> = input.and_then(|t| {
            t.shape.iter().map(|&d| usize::try_from(d).ok()).collect()
        });
        let Some((input, specs)) = input
            .zip(shape)
            .and_then(|(t, shape)| Some((t, crate::rt::op_kinds::state(&op.options, &shape)?)))
        else {
            return Err(self.err(
                format_args!(
                    "op {k} ({}) keeps state whose size its options and input 0's shape do not give (options {:?})",
                    op.opcode, op.options
                ),
                "export the op with the options and input shape TFLM's signal library accepts",
            ));
        };
        let input_dtype = input.dtype;
        self.add_tensors(k, op, tensors, specs, input_dtype, TensorKind::Variable)
    }

    /// Appends to op `k`'s scratch the op-local tensors its bundled kernel needs (the rule
    /// is [`crate::rt::op_kinds::kernel_scratch`]), after the file's tensors.
    pub(super) fn add_kernel_scratch(&self, k: usize, op: &mut Op, tensors: &mut Vec<Tensor>) -> Result<()> {
        let shapes: Option<Vec<Vec<usize>>> = op
            .inputs
            .iter()
            .map(|t| {
                let t = tensors.get((*t)?.get())?;
                t.shape.iter().map(|&d| usize::try_from(d).ok()).collect()
            })
            .collect();
        let shapes = shapes.unwrap_or_default();
        let views: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
        let Some(specs) = crate::rt::op_kinds::kernel_scratch(&op.options, &views) else {
            return Err(self.err(
                format_args!(
                    "op {k} ({}) needs kernel scratch whose size its options and input shapes do not give (options {:?}, input shapes {shapes:?})",
                    op.opcode, op.options
                ),
                "export the op with the options and input shapes TFLM accepts",
            ));
        };
        self.add_tensors(k, op, tensors, specs, DType::F32, TensorKind::Activation)
    }

    /// Appends the tensors `specs` describe to op `k` (variables to its inputs, activations
    /// to its scratch) and to `tensors`, named after the op's first output.
    fn add_tensors(
        &self,
        k: usize,
        op: &mut Op,
        tensors: &mut Vec<Tensor>,
        specs: [Option<crate::rt::op_kinds::StateTensor>; 2],
        input_dtype: DType,
        kind: TensorKind,
    ) -> Result<()> {
        let base = op
            .outputs
            .first()
            .and_then(|t| tensors.get(t.get()))
            .map_or_else(|| format!("op{k}"), |t| t.name.clone());
        let what = if kind == TensorKind::Variable { "state" } else { "scratch" };
        for (j, spec) in specs.into_iter().flatten().enumerate() {
            use crate::rt::op_kinds::StateElement;
            let dtype = match spec.element {
                StateElement::I16 => DType::I16,
                StateElement::I32 => DType::I32,
                StateElement::U32 => DType::U32,
                StateElement::F32 => DType::F32,
                StateElement::Input => input_dtype,
            };
            let elements = spec.elements as u64;
            let size = dtype.bytes_for(elements).ok_or_else(|| {
                self.corrupt(format_args!(
                    "op {k} ({}) needs {elements} elements of {what}, more than 2^64 bytes",
                    op.opcode
                ))
            })?;
            let index = tensors.len();
            let id = u32::try_from(index)
                .map_err(|_| self.corrupt(format_args!("op {k} ({}) adds a tensor past 2^32", op.opcode)))?;
            tensors.push(Tensor {
                id: index.to_string(),
                name: format!("{base}/{what}{j}"),
                dtype,
                shape: vec![elements],
                size,
                kind,
                quantization: None,
                align_hint: None,
                data: None,
            });
            if kind == TensorKind::Variable {
                op.inputs.push(Some(TensorIndex(id)));
            } else {
                op.scratch.push(TensorIndex(id));
            }
        }
        Ok(())
    }
}
