//! Kinds with state that carries from run to run: `UNIDIRECTIONAL_SEQUENCE_LSTM` (`lstm`)
//! and `SVDF` (`svdf`).

pub(crate) mod lstm;
pub(crate) mod svdf;
