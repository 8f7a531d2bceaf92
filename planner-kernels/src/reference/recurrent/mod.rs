//! Kinds with state that carries from run to run: `UNIDIRECTIONAL_SEQUENCE_LSTM` (`lstm`)
//! and `SVDF` (`svdf`, float32 in `svdf_f32`).

pub(crate) mod lstm;
pub(crate) mod svdf;
pub(crate) mod svdf_f32;

/// The index among the SVDF op's variables of its state, input 4 (both SVDF kernels read it).
fn state_at(
    op: &planner_rt::kernel::OpView<'_, '_>,
) -> Result<usize, crate::reference::KernelError> {
    match op.input(4).map(|s| s.data) {
        Some(planner_rt::kernel::Data::Variable(at)) => Ok(at),
        _ => Err(crate::reference::KernelError::Missing {
            tensor: "input 4 (state)",
        }),
    }
}
