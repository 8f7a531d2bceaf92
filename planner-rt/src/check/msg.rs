//! The checker's messages, built at compile time.

use super::{PlanTable, SlotRow};

/// A message built at compile time: `const` panics cannot format numbers, so this does.
pub(super) struct Msg {
    buf: [u8; 512],
    len: usize,
}

impl Msg {
    /// A message about the model of `p`.
    pub(super) const fn model(p: &PlanTable<'_>) -> Msg {
        Msg::named("model", p.model)
    }

    /// A message about op `k` of the model of `p`, whose opcode is `opcode`: `op 3 (ADD)`.
    pub(super) const fn op(p: &PlanTable<'_>, k: usize, opcode: &str) -> Msg {
        Msg::model(p).s("op ").n(k as u64).s(" (").s(opcode).s(")")
    }

    /// A message about the tensor `id` of the model of `p`.
    pub(super) const fn tensor(p: &PlanTable<'_>, id: &str) -> Msg {
        Msg::model(p).s("tensor `").s(id).s("`")
    }

    /// Appends slot `s` with the bytes `s.offset..end` its class spans and its lifetime:
    /// `` `x` (bytes 0..16, ops 1..=3)``.
    pub(super) const fn live(self, s: &SlotRow<'_>, end: u64) -> Msg {
        self.s("`")
            .s(s.id)
            .s("` (bytes ")
            .span(s.offset, end)
            .s(", ops ")
            .lifetime(s)
            .s(")")
    }

    /// Appends the byte range `start..end`: `16..48`.
    pub(super) const fn span(self, start: u64, end: u64) -> Msg {
        self.n(start).s("..").n(end)
    }

    /// Appends the ops slot `s` is live at: `1..=3`.
    pub(super) const fn lifetime(self, s: &SlotRow<'_>) -> Msg {
        self.n(s.start as u64).s("..=").n(s.end as u64)
    }

    /// Appends `link` (` names slot #`), `n`, `, which does not exist` and the fix, then
    /// panics: the table refers to a slot row it does not have.
    pub(super) const fn no_slot(self, link: &str, n: u64) -> ! {
        self.s(link).n(n).s(", which does not exist").rebuild()
    }

    /// Appends `but` (` but the plan has `), the count `n` and what it counts (` arenas`):
    /// the second half of a table's reference past the end of another.
    pub(super) const fn has(self, but: &str, n: u64, what: &str) -> Msg {
        self.s(but).n(n).s(what)
    }

    /// Appends the fix for a table no plan file gives (`; rebuild the plan file with
    /// planner-build`), then panics.
    pub(super) const fn rebuild(self) -> ! {
        self.s("; rebuild the plan file with planner-build").panic()
    }

    /// Appends where slot `s` sits: `offset 16 of arena #0`.
    pub(super) const fn at(self, s: &SlotRow<'_>) -> Msg {
        self.s("offset ")
            .n(s.offset)
            .s(" of arena #")
            .n(s.arena as u64)
    }

    /// A message starting with `what` (`model`, `group`) and its name.
    pub(super) const fn named(what: &str, name: &str) -> Msg {
        Msg {
            buf: [0; 512],
            len: 0,
        }
        .s(what)
        .s(" `")
        .s(name)
        .s("`: ")
    }

    /// Appends `s`, as much of it as fits.
    pub(super) const fn s(mut self, s: &str) -> Msg {
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

    /// Appends `v` in decimal, as much of it as fits.
    pub(super) const fn n(mut self, mut v: u64) -> Msg {
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

    /// Panics with the message: a compile error in a `const` item.
    pub(super) const fn panic(self) -> ! {
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
