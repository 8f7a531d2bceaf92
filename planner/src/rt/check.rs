//! The `const fn` plan checker: rustc evaluates it on the table `include_model!` builds from
//! the plan file, so a plan that breaks the layout rules fails to compile.
//!
//! The generated tensor views are sound because of what [`check`] proves: every slot lies
//! inside its arena and is aligned for its element type; two tensors whose lifetimes share an
//! op never share a byte of a writable arena (unless the plan says one is an alias of the
//! other, in which case no view ever holds both at once); every tensor an op touches is live
//! at that op; no op writes a read-only arena; arenas keep their budgets; blobs are exactly as
//! long as their arenas. Each failure panics with a message that names the model, the
//! tensors and the bytes, which rustc prints as the compile error.
//!
//! The overlap test runs in time linear in the slots plus the overlapping pairs: slots come
//! sorted by (arena, offset), which the checker verifies, so each slot is compared only with
//! the slots that start before it ends.

use super::arena::MAX_ALIGN;

mod group;
pub use group::{GroupArenaRow, GroupModelRow, GroupTable, check_group};

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
}

/// Checks the whole table; panics (a compile error in a `const` item) on the first fault.
pub const fn check(plan: &PlanTable<'_>) {
    check_memories(plan);
    check_slots(plan);
    check_overlaps(plan);
    check_ops(plan);
}

const fn check_memories(p: &PlanTable<'_>) {
    let mut a = 0;
    while a < p.arenas.len() {
        let arena = &p.arenas[a];
        if arena.memory as usize >= p.memories.len() || arena.source as usize >= p.memories.len() {
            Msg::model(p)
                .s("arena ")
                .s(arena.name)
                .s(" names memory #")
                .n(if arena.memory > arena.source {
                    arena.memory
                } else {
                    arena.source
                } as u64)
                .s(" but the plan has ")
                .n(p.memories.len() as u64)
                .s(" memories; rebuild the plan file with planner-build")
                .panic();
        }
        if !arena.align.is_power_of_two() || arena.align > MAX_ALIGN {
            Msg::model(p)
                .s("arena ")
                .s(arena.name)
                .s(" has alignment ")
                .n(arena.align)
                .s(", which is not a power of two up to 65536; use 1, 2, 4, ..., 65536")
                .panic();
        }
        if arena.budget != NONE && arena.size > arena.budget {
            Msg::model(p)
                .s("arena ")
                .s(arena.name)
                .s(" is ")
                .n(arena.size)
                .s(" bytes, over its budget of ")
                .n(arena.budget)
                .s(" by ")
                .n(arena.size - arena.budget)
                .s(" bytes; raise the memory's max_size in the manifest or re-plan")
                .panic();
        }
        if arena.blob_len != NONE && arena.blob_len != arena.size {
            Msg::model(p)
                .s("the blob of arena ")
                .s(arena.name)
                .s(" is ")
                .n(arena.blob_len)
                .s(" bytes but the arena is ")
                .n(arena.size)
                .s(" bytes; the blob and the plan file come from different builds, re-run planner-build")
                .panic();
        }
        a += 1;
    }
    let mut m = 0;
    while m < p.memories.len() {
        let mem = &p.memories[m];
        let mut total: u64 = 0;
        let mut a = 0;
        while a < p.arenas.len() {
            let arena = &p.arenas[a];
            if arena.memory as usize == m {
                total = total.saturating_add(arena.size);
            }
            if arena.source as usize == m && arena.source != arena.memory && arena.blob_len != NONE
            {
                total = total.saturating_add(arena.blob_len);
            }
            a += 1;
        }
        if mem.budget != NONE && total > mem.budget {
            Msg::model(p)
                .s("the arenas in memory ")
                .s(mem.name)
                .s(" take ")
                .n(total)
                .s(" bytes, over its max_size of ")
                .n(mem.budget)
                .s(" by ")
                .n(total - mem.budget)
                .s(" bytes; raise max_size in the manifest or re-plan")
                .panic();
        }
        m += 1;
    }
}

const fn check_slots(p: &PlanTable<'_>) {
    let mut i = 0;
    while i < p.slots.len() {
        let s = &p.slots[i];
        if s.arena as usize >= p.arenas.len() {
            Msg::model(p)
                .s("tensor `")
                .s(s.id)
                .s("` names arena #")
                .n(s.arena as u64)
                .s(" but the plan has ")
                .n(p.arenas.len() as u64)
                .s(" arenas; rebuild the plan file with planner-build")
                .panic();
        }
        let arena = &p.arenas[s.arena as usize];
        if i > 0 {
            let prev = &p.slots[i - 1];
            if prev.arena > s.arena || (prev.arena == s.arena && prev.offset > s.offset) {
                Msg::model(p)
                    .s("the slot table is not sorted by arena and offset at tensor `")
                    .s(s.id)
                    .s("`; generated code must sort it")
                    .panic();
            }
        }
        if s.root as usize >= p.slots.len() {
            Msg::model(p)
                .s("tensor `")
                .s(s.id)
                .s("` aliases slot #")
                .n(s.root as u64)
                .s(", which does not exist; rebuild the plan file with planner-build")
                .panic();
        }
        check_alias(p, i);
        let end = match s.offset.checked_add(s.size) {
            Some(e) => e,
            None => u64::MAX,
        };
        if end > arena.size {
            Msg::model(p)
                .s("tensor `")
                .s(s.id)
                .s("` takes bytes ")
                .n(s.offset)
                .s("..")
                .n(end)
                .s(" of arena ")
                .s(arena.name)
                .s(", which has only ")
                .n(arena.size)
                .s(" bytes; the slot passes the arena's end by ")
                .n(end - arena.size)
                .s(" bytes, re-plan or grow the arena")
                .panic();
        }
        let align = if s.align > s.elem_align {
            s.align
        } else {
            s.elem_align
        };
        if !align.is_power_of_two() {
            Msg::model(p)
                .s("tensor `")
                .s(s.id)
                .s("` has alignment ")
                .n(align)
                .s(", which is not a power of two; use 1, 2, 4, 8, 16, ...")
                .panic();
        }
        if !s.offset.is_multiple_of(align) {
            Msg::model(p)
                .s("tensor `")
                .s(s.id)
                .s("` is at offset ")
                .n(s.offset)
                .s(" of arena ")
                .s(arena.name)
                .s(", not a multiple of its alignment ")
                .n(align)
                .s(" (")
                .n(s.offset % align)
                .s(" bytes past ")
                .n(s.offset - s.offset % align)
                .s("); re-plan so the offset is aligned")
                .panic();
        }
        // A zero-size slot still makes a view at `base + offset`, which must be aligned too.
        if align > arena.align {
            Msg::model(p)
                .s("tensor `")
                .s(s.id)
                .s("` needs alignment ")
                .n(align)
                .s(" but its arena ")
                .s(arena.name)
                .s(" is aligned to only ")
                .n(arena.align)
                .s(" bytes; raise the arena's alignment to at least ")
                .n(align)
                .panic();
        }
        let view = match s.elements.checked_mul(s.elem_size) {
            Some(v) => v,
            None => u64::MAX,
        };
        if view > s.size {
            Msg::model(p)
                .s("tensor `")
                .s(s.id)
                .s("` has ")
                .n(s.elements)
                .s(" elements of ")
                .n(s.elem_size)
                .s(" bytes but its slot is only ")
                .n(s.size)
                .s(" bytes; fix the tensor's size or shape in the plan")
                .panic();
        }
        if s.start > s.end {
            Msg::model(p)
                .s("tensor `")
                .s(s.id)
                .s("` is live from op ")
                .n(s.start as u64)
                .s(" to op ")
                .n(s.end as u64)
                .s(", which ends before it starts; fix its lifetime")
                .panic();
        }
        i += 1;
    }
}

const fn check_overlaps(p: &PlanTable<'_>) {
    let mut i = 0;
    while i < p.slots.len() {
        let a = &p.slots[i];
        let a_end = a.offset.saturating_add(a.size);
        let arena = &p.arenas[a.arena as usize];
        let mut j = i + 1;
        // Sorted by (arena, offset): only the slots starting before `a` ends can share a byte.
        while j < p.slots.len() && p.slots[j].arena == a.arena && p.slots[j].offset < a_end {
            let b = &p.slots[j];
            let live_together = a.start <= b.end && b.start <= a.end;
            let same_bytes = a.root == b.root || resolve(p, a.root) == resolve(p, b.root);
            if arena.writable && live_together && !same_bytes && a.size > 0 && b.size > 0 {
                let b_end = b.offset.saturating_add(b.size);
                let first = if a.start > b.start { a.start } else { b.start };
                Msg::model(p)
                    .s("tensors `")
                    .s(a.id)
                    .s("` (bytes ")
                    .n(a.offset)
                    .s("..")
                    .n(a_end)
                    .s(", ops ")
                    .n(a.start as u64)
                    .s("..=")
                    .n(a.end as u64)
                    .s(") and `")
                    .s(b.id)
                    .s("` (bytes ")
                    .n(b.offset)
                    .s("..")
                    .n(b_end)
                    .s(", ops ")
                    .n(b.start as u64)
                    .s("..=")
                    .n(b.end as u64)
                    .s(") are both live at op ")
                    .n(first as u64)
                    .s(" and share bytes ")
                    .n(b.offset)
                    .s("..")
                    .n(if a_end < b_end { a_end } else { b_end })
                    .s(" of arena ")
                    .s(arena.name)
                    .s("; re-plan so live tensors are disjoint")
                    .panic();
            }
            j += 1;
        }
        i += 1;
    }
}

/// An alias views its root's bytes: it must sit in the root's arena at the root's offset,
/// or its view would read other bytes than the root's and escape the overlap check.
const fn check_alias(p: &PlanTable<'_>, i: usize) {
    let s = &p.slots[i];
    let r = &p.slots[resolve(p, s.root) as usize];
    if r.arena != s.arena || r.offset != s.offset {
        Msg::model(p)
            .s("tensor `")
            .s(s.id)
            .s("` is an alias of `")
            .s(r.id)
            .s("` but sits at offset ")
            .n(s.offset)
            .s(" of arena #")
            .n(s.arena as u64)
            .s(", not at its offset ")
            .n(r.offset)
            .s(" of arena #")
            .n(r.arena as u64)
            .s("; an alias shares its root's slot, rebuild the plan file with planner-build")
            .panic();
    }
}

/// Follows `root` links to the slot that owns the bytes (bounded, so a cycle cannot hang
/// the compiler).
const fn resolve(p: &PlanTable<'_>, mut slot: u32) -> u32 {
    let mut steps = 0;
    while steps < p.slots.len() {
        let next = p.slots[slot as usize].root;
        if next == slot || next as usize >= p.slots.len() {
            return slot;
        }
        slot = next;
        steps += 1;
    }
    slot
}

const fn check_ops(p: &PlanTable<'_>) {
    let mut k = 0;
    while k < p.ops.len() {
        let op = &p.ops[k];
        check_op_slots(p, k, op.reads, false);
        check_op_slots(p, k, op.writes, true);
        k += 1;
    }
}

const fn check_op_slots(p: &PlanTable<'_>, k: usize, slots: &[u32], write: bool) {
    let op = &p.ops[k];
    let mut i = 0;
    while i < slots.len() {
        if slots[i] as usize >= p.slots.len() {
            Msg::model(p)
                .s("op ")
                .n(k as u64)
                .s(" (")
                .s(op.opcode)
                .s(") names slot #")
                .n(slots[i] as u64)
                .s(", which does not exist; rebuild the plan file with planner-build")
                .panic();
        }
        let s = &p.slots[slots[i] as usize];
        if (k as u64) < s.start as u64 || (k as u64) > s.end as u64 {
            Msg::model(p)
                .s("op ")
                .n(k as u64)
                .s(" (")
                .s(op.opcode)
                .s(") uses tensor `")
                .s(s.id)
                .s("`, but the plan says it is live only at ops ")
                .n(s.start as u64)
                .s("..=")
                .n(s.end as u64)
                .s("; fix its lifetime so it covers op ")
                .n(k as u64)
                .panic();
        }
        if write && !p.arenas[s.arena as usize].writable {
            Msg::model(p)
                .s("op ")
                .n(k as u64)
                .s(" (")
                .s(op.opcode)
                .s(") writes tensor `")
                .s(s.id)
                .s("`, which is in read-only arena ")
                .s(p.arenas[s.arena as usize].name)
                .s("; place op outputs in a scratch or persistent arena")
                .panic();
        }
        i += 1;
    }
}

/// A message built at compile time: `const` panics cannot format numbers, so this does.
struct Msg {
    buf: [u8; 512],
    len: usize,
}

impl Msg {
    const fn model(p: &PlanTable<'_>) -> Msg {
        Msg {
            buf: [0; 512],
            len: 0,
        }
        .s("model `")
        .s(p.model)
        .s("`: ")
    }

    const fn s(mut self, s: &str) -> Msg {
        let b = s.as_bytes();
        let mut i = 0;
        // Stops at a character boundary so the message stays valid UTF-8.
        while i < b.len() && self.len + utf8_len(b[i]) <= self.buf.len() {
            let n = utf8_len(b[i]);
            let mut k = 0;
            while k < n && i < b.len() {
                self.buf[self.len] = b[i];
                self.len += 1;
                i += 1;
                k += 1;
            }
        }
        self
    }

    const fn n(mut self, mut v: u64) -> Msg {
        let mut digits = [0u8; 20];
        let mut k = 0;
        loop {
            digits[k] = b'0' + (v % 10) as u8;
            k += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        while k > 0 && self.len < self.buf.len() {
            k -= 1;
            self.buf[self.len] = digits[k];
            self.len += 1;
        }
        self
    }

    const fn panic(self) -> ! {
        let (text, _) = self.buf.split_at(self.len);
        match core::str::from_utf8(text) {
            Ok(s) => panic!("{}", s),
            Err(_) => panic!("the plan check failed (its message was not valid UTF-8)"),
        }
    }
}

const fn utf8_len(first: u8) -> usize {
    if first < 0x80 {
        1
    } else if first >= 0xF0 {
        4
    } else if first >= 0xE0 {
        3
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::string::String;
    use std::vec;

    const MEMS: &[MemoryRow] = &[MemoryRow {
        name: "SRAM",
        budget: 256,
    }];

    fn arena(size: u64) -> ArenaRow<'static> {
        ArenaRow {
            name: "scratch.SRAM",
            memory: 0,
            source: 0,
            size,
            budget: NONE,
            align: 16,
            writable: true,
            blob_len: NONE,
        }
    }

    fn slot(
        id: &'static str,
        offset: u64,
        size: u64,
        start: u32,
        end: u32,
        root: u32,
    ) -> SlotRow<'static> {
        SlotRow {
            id,
            arena: 0,
            offset,
            size,
            align: 16,
            elem_size: 1,
            elem_align: 1,
            elements: size,
            start,
            end,
            root,
        }
    }

    fn run(
        arenas: &'static [ArenaRow<'static>],
        slots: &'static [SlotRow<'static>],
        ops: &'static [OpRow<'static>],
    ) -> String {
        let p = PlanTable {
            model: "m",
            memories: MEMS,
            arenas,
            slots,
            ops,
        };
        let r = std::panic::catch_unwind(|| check(&p));
        match r {
            Ok(()) => String::new(),
            Err(e) => e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| String::from(*s)))
                .unwrap_or_default(),
        }
    }

    /// Test tables live for the whole run; keeping them reachable from a static tells
    /// Miri's leak check they are meant to.
    static KEPT: std::sync::Mutex<std::vec::Vec<&'static (dyn core::any::Any + Sync)>> =
        std::sync::Mutex::new(std::vec::Vec::new());

    fn leak<T: Sync + 'static>(v: std::vec::Vec<T>) -> &'static [T] {
        let v: &'static std::vec::Vec<T> = std::boxed::Box::leak(std::boxed::Box::new(v));
        if let Ok(mut kept) = KEPT.lock() {
            kept.push(v);
        }
        v
    }

    #[test]
    fn accepts_a_good_plan() {
        let slots = leak(vec![
            slot("a", 0, 64, 0, 1, 0),
            slot("b", 0, 32, 2, 2, 1),
            slot("c", 64, 64, 1, 2, 2),
        ]);
        let ops = leak(vec![OpRow {
            opcode: "ADD",
            reads: &[0],
            writes: &[2],
        }]);
        assert_eq!(run(leak(vec![arena(128)]), slots, &ops[..0]), "");
        let ops1 = leak(vec![
            OpRow {
                opcode: "X",
                reads: &[],
                writes: &[0],
            },
            ops[0],
        ]);
        assert_eq!(run(leak(vec![arena(128)]), slots, ops1), "");
    }

    #[test]
    fn names_overlapping_live_tensors_and_bytes() {
        let slots = leak(vec![slot("a", 0, 64, 0, 1, 0), slot("b", 48, 32, 1, 2, 1)]);
        let m = run(leak(vec![arena(128)]), slots, &[]);
        assert!(m.contains("model `m`"), "{m}");
        assert!(m.contains("`a`") && m.contains("`b`"), "{m}");
        assert!(m.contains("share bytes 48..64"), "{m}");
        // Not live together: fine. Aliases: fine.
        let slots = leak(vec![slot("a", 0, 64, 0, 1, 0), slot("b", 48, 32, 2, 2, 1)]);
        assert_eq!(run(leak(vec![arena(128)]), slots, &[]), "");
        let slots = leak(vec![slot("a", 0, 64, 0, 1, 0), slot("b", 0, 64, 1, 2, 0)]);
        assert_eq!(run(leak(vec![arena(128)]), slots, &[]), "");
    }

    #[test]
    fn rejects_each_layout_fault() {
        let m = run(
            leak(vec![arena(64)]),
            leak(vec![slot("a", 32, 64, 0, 0, 0)]),
            &[],
        );
        assert!(m.contains("passes the arena's end by 32 bytes"), "{m}");
        let m = run(
            leak(vec![arena(64)]),
            leak(vec![slot("a", 8, 8, 0, 0, 0)]),
            &[],
        );
        assert!(m.contains("offset 8") && m.contains("alignment 16"), "{m}");
        let mut over = arena(300);
        over.budget = 200;
        let m = run(leak(vec![over]), &[], &[]);
        assert!(m.contains("over its budget of 200 by 100 bytes"), "{m}");
        let m = run(leak(vec![arena(300)]), &[], &[]);
        assert!(m.contains("max_size of 256 by 44"), "{m}");
        let mut blob = arena(64);
        blob.blob_len = 60;
        let m = run(leak(vec![blob]), &[], &[]);
        assert!(m.contains("blob of arena scratch.SRAM is 60 bytes"), "{m}");
        let mut odd = arena(64);
        odd.align = 24;
        assert!(run(leak(vec![odd]), &[], &[]).contains("not a power of two"));
        let mut big = slot("a", 0, 4, 0, 0, 0);
        big.elements = 2;
        big.elem_size = 4;
        let m = run(leak(vec![arena(64)]), leak(vec![big]), &[]);
        assert!(m.contains("2 elements of 4 bytes"), "{m}");
        let m = run(
            leak(vec![arena(64)]),
            leak(vec![slot("a", 0, 4, 1, 1, 0)]),
            leak(vec![OpRow {
                opcode: "ADD",
                reads: &[0],
                writes: &[],
            }]),
        );
        assert!(m.contains("live only at ops 1..=1"), "{m}");
        let mut ro = arena(64);
        ro.writable = false;
        let m = run(
            leak(vec![ro]),
            leak(vec![slot("a", 0, 4, 0, 0, 0)]),
            leak(vec![OpRow {
                opcode: "ADD",
                reads: &[],
                writes: &[0],
            }]),
        );
        assert!(m.contains("read-only arena"), "{m}");
        let m = run(
            leak(vec![arena(128)]),
            leak(vec![slot("a", 64, 4, 0, 0, 0), slot("b", 0, 4, 0, 0, 1)]),
            &[],
        );
        assert!(m.contains("not sorted"), "{m}");
    }

    #[test]
    fn zero_size_slots_are_aligned_too() {
        let mut loose = arena(64);
        loose.align = 1;
        let mut empty = slot("e", 8, 0, 0, 0, 0);
        empty.align = 1;
        empty.elem_align = 8;
        empty.elem_size = 8;
        empty.elements = 0;
        let m = run(leak(vec![loose]), leak(vec![empty]), &[]);
        assert!(
            m.contains(
                "tensor `e` needs alignment 8 but its arena scratch.SRAM is aligned to only 1"
            ),
            "{m}"
        );
    }

    #[test]
    fn an_alias_sits_at_its_roots_offset() {
        let slots = leak(vec![slot("a", 0, 16, 0, 1, 0), slot("b", 16, 16, 1, 2, 0)]);
        let m = run(leak(vec![arena(64)]), slots, &[]);
        assert!(
            m.contains("tensor `b` is an alias of `a` but sits at offset 16 of arena #0, not at its offset 0 of arena #0"),
            "{m}"
        );
        let slots = leak(vec![slot("a", 0, 16, 0, 1, 0), slot("b", 0, 16, 1, 2, 0)]);
        assert_eq!(run(leak(vec![arena(64)]), slots, &[]), "");
    }
}
