//! Kinds with state that carries from run to run: `UNIDIRECTIONAL_SEQUENCE_LSTM` (`lstm`)
//! and `SVDF` (`svdf`, float32 in `svdf_f32`).

pub(crate) mod lstm;
pub(crate) mod svdf;
pub(crate) mod svdf_f32;
