//! The plan as `const` data: the rows `include_model!` fills from the plan file, and the
//! slot orders it sorts them in.

/// "No value" for the optional numbers of the table (budgets, blob lengths).
pub const NONE: u64 = u64::MAX;

/// The plan, as `const` data.
#[derive(Clone, Copy, Debug)]
pub struct PlanTable<'a> {
    /// The model's name, for messages.
    pub model: &'a str,
    /// Memories with a budget.
    pub memories: &'a [MemoryRow<'a>],
    /// Arenas.
    pub arenas: &'a [ArenaRow<'a>],
    /// Tensor slots, sorted by (arena, offset, index).
    pub slots: &'a [SlotRow<'a>],
    /// Operators in execution order.
    pub ops: &'a [OpRow<'a>],
    /// Every slot index once, sorted by first live op (`start`); the checker verifies it.
    pub by_start: &'a [u32],
    /// Every slot index once, sorted by last live op (`end`); the checker verifies it.
    pub by_end: &'a [u32],
}

/// A memory's budget over all its arenas.
#[derive(Clone, Copy, Debug)]
pub struct MemoryRow<'a> {
    /// The memory's name.
    pub name: &'a str,
    /// Most bytes its arenas may take together ([`NONE`]: no limit).
    pub budget: u64,
}

/// One arena.
#[derive(Clone, Copy, Debug)]
pub struct ArenaRow<'a> {
    /// `role.MEMORY`, for messages.
    pub name: &'a str,
    /// Index in [`PlanTable::memories`] of its runtime memory.
    pub memory: u32,
    /// Index in [`PlanTable::memories`] of the memory its blob is in; equal to `memory`
    /// except for a staged constant arena, whose blob also takes room in its source.
    pub source: u32,
    /// Its length in bytes (the `static`'s length).
    pub size: u64,
    /// Bytes the plan allows it ([`NONE`]: no limit).
    pub budget: u64,
    /// Alignment of its base.
    pub align: u64,
    /// True when views into it may be mutable (scratch, persistent); false for constants.
    pub writable: bool,
    /// Length of the blob that fills it ([`NONE`]: no blob).
    pub blob_len: u64,
}

/// One tensor's slot.
#[derive(Clone, Copy, Debug)]
pub struct SlotRow<'a> {
    /// The tensor's id, for messages.
    pub id: &'a str,
    /// Index in [`PlanTable::arenas`].
    pub arena: u32,
    /// Byte offset in the arena.
    pub offset: u64,
    /// Bytes.
    pub size: u64,
    /// Alignment the plan promises for the slot.
    pub align: u64,
    /// `size_of` the view's element type.
    pub elem_size: u64,
    /// `align_of` the view's element type.
    pub elem_align: u64,
    /// Elements the view has.
    pub elements: u64,
    /// First op at which the tensor is live.
    pub start: u32,
    /// Last op at which the tensor is live.
    pub end: u32,
    /// The slot index of the tensor whose bytes this one is (itself unless an alias).
    pub root: u32,
}

/// One operator: the slots it reads and writes.
#[derive(Clone, Copy, Debug)]
pub struct OpRow<'a> {
    /// The opcode, for messages.
    pub opcode: &'a str,
    /// Slots it reads (inputs).
    pub reads: &'a [u32],
    /// Slots it writes (outputs and op scratch).
    pub writes: &'a [u32],
    /// The input whose bytes the op's output takes over, when the op runs in place.
    pub in_place: Option<InPlaceRow>,
}

/// An op that runs in place: its output `output` starts at the bytes of its input `input`
/// (or, with row overlap, before them), which dies at the op. The two share bytes at that op
/// only; the op's view of them is one buffer of [`in_place_elements`] output elements from
/// the output's offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InPlaceRow {
    /// The input's slot (one of the op's `reads`).
    pub input: u32,
    /// The output's slot (one of the op's `writes`).
    pub output: u32,
    /// With row overlap ([`crate::rows`]): how the op's output rows read its input rows;
    /// the input then starts at least [`Rows::min_shift`](crate::rows::Rows::min_shift)
    /// elements after the output. `None`: the output starts at the input.
    pub rows: Option<crate::rows::Rows>,
}

/// Bytes of the buffer an in-place op sees: the output's view, or the input's view after
/// its offset from the output, whichever reaches further, in whole output elements.
pub const fn in_place_bytes(input: &SlotRow<'_>, output: &SlotRow<'_>) -> u64 {
    output
        .elem_size
        .saturating_mul(in_place_elements(input, output))
}

/// Output elements of the buffer an in-place op sees from the output's offset: enough to
/// hold the output's view and the input's view after its offset from the output (0 but
/// with row overlap) (generated code builds the output's slice with this length).
pub const fn in_place_elements(input: &SlotRow<'_>, output: &SlotRow<'_>) -> u64 {
    let i = input
        .elements
        .saturating_mul(input.elem_size)
        .saturating_add(input.offset.saturating_sub(output.offset));
    let o = output.elements.saturating_mul(output.elem_size);
    let bytes = if i > o { i } else { o };
    if output.elem_size == 0 {
        output.elements
    } else {
        bytes.div_ceil(output.elem_size)
    }
}

/// Fills `by_start` and `by_end` with the slot orders [`PlanTable::by_start`] and
/// [`PlanTable::by_end`] list, ties broken by slot index (so generated code is
/// deterministic). Each must be as long as `slots`; entries past that are left as they are.
pub fn time_orders(slots: &[SlotRow<'_>], by_start: &mut [u32], by_end: &mut [u32]) {
    for (i, (s, e)) in by_start.iter_mut().zip(by_end.iter_mut()).enumerate() {
        (*s, *e) = (i as u32, i as u32);
    }
    let n = slots.len().min(by_start.len()).min(by_end.len());
    let key = |i: &u32, f: fn(&SlotRow<'_>) -> u32| (slots.get(*i as usize).map_or(0, f), *i);
    by_start[..n].sort_unstable_by_key(|i| key(i, |s| s.start));
    by_end[..n].sort_unstable_by_key(|i| key(i, |s| s.end));
}
