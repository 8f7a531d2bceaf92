//! Import: problems and models from files.
//!
//! - [`csv`]: MiniMalloc's offset-assignment CSV (`id,lower,upper,size[,offset]`).

pub mod csv;
