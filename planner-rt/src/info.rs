//! Descriptions of a model's arenas and tensors that `include_model!` generates as public
//! constants (`<model>::ARENA_INFO`, `<model>::TENSOR_LIST`), for code that needs the layout:
//! a linker map check, a C kernel addressing tensors by arena and offset, a debugger script.

/// One arena of a model: its place in `ARENAS` order, what it holds and where it links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArenaInfo {
    /// `role.MEMORY`, as messages and the plan file name it (`scratch.DTCM`).
    pub name: &'static str,
    /// `scratch`, `persistent` or `constant`.
    pub role: &'static str,
    /// The memory it is read and written in at run time.
    pub memory: &'static str,
    /// The memory its bytes come from (differs from `memory` only for staged constants).
    pub source_memory: &'static str,
    /// Bytes.
    pub size: usize,
    /// Alignment of its start, in bytes.
    pub align: usize,
    /// Link section of its writable `static` (`None` for weights read in place, which
    /// have only their blob).
    pub section: Option<&'static str>,
    /// Link section of its weight blob (`None` for arenas without weights).
    pub blob_section: Option<&'static str>,
}

/// One tensor of a model: where its bytes are and the accessor that reaches them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorSlot {
    /// The tensor's id in the plan.
    pub id: &'static str,
    /// Its name.
    pub name: &'static str,
    /// The method of a ready `Model` that returns its view (`tensor_<name>`; `_mut` too
    /// for writable arenas).
    pub accessor: &'static str,
    /// Index into `ARENA_INFO` (and `ARENAS`, and `Model::arena_ptrs()`).
    pub arena: usize,
    /// Byte offset in its arena.
    pub offset: usize,
    /// Bytes.
    pub size: usize,
}
