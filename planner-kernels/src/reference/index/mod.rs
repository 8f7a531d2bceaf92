//! Kinds that pick elements by index: `GATHER` (`gather`); `GATHER_ND`,
//! `EMBEDDING_LOOKUP`, `DYNAMIC_UPDATE_SLICE`, `FILL`, `ZEROS_LIKE`, `SHAPE`, `BROADCAST_TO`
//! and `BROADCAST_ARGS` (`lookup`).

pub(crate) mod gather;
pub(crate) mod lookup;
