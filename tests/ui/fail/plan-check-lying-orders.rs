// The model `const` check trusts no order the table states: slot orders by first and last
// live op that hide an overlap, list a slot twice or miss one are refused, as is an alias
// naming an alias as its root.
use planner::rt::check::{ArenaRow, MemoryRow, NONE, PlanTable, SlotRow, check, scratch_len};

include!("../../../planner-rt/src/check/fixture/rows.rs");

/// `a` (ops 0..=2) and `b` (op 2) share bytes 32..64.
const SLOTS: &[SlotRow] = &[slot("a", 0, 64, 0, 2, 0), slot("b", 32, 32, 2, 2, 1)];
const ARENAS: &[ArenaRow] = &[arena(128)];
const fn table(by_start: &'static [u32], by_end: &'static [u32]) -> PlanTable<'static> {
    PlanTable {
        model: "m",
        memories: MEMS,
        arenas: ARENAS,
        slots: SLOTS,
        ops: &[],
        by_start,
        by_end,
    }
}
const fn run(t: &PlanTable<'_>) {
    let mut scratch = [0u64; scratch_len(2)];
    check(t, &mut scratch)
}

// Truthful orders: the overlap is found.
const _: () = run(&table(&[0, 1], &[0, 1]));
// `b` entering before `a` would see an empty set: the order is refused as unsorted.
const _: () = run(&table(&[1, 0], &[0, 1]));
// A slot listed twice.
const _: () = run(&table(&[0, 0], &[0, 1]));
// A slot missing.
const _: () = run(&table(&[0], &[0, 1]));

fn main() {}
