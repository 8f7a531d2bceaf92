//! The layout of the `scratch` words the checker works in (a `const` item has no
//! allocator): per-class arrays, the order bitset, and the live set, a bitset of levels.

/// Scratch words [`check`](super::check) needs for a table of `slots` slots: per alias class its byte
/// length, live-member count, current extent, first and last live op and in-place links, a bitset
/// for the order checks, and the live set's levels.
pub const fn scratch_len(slots: usize) -> usize {
    Words::PER_SLOT * slots + words(slots) + Levels::new(slots, 0).end
}

/// Where the per-class arrays of [`check_overlaps`](super::sweep::check_overlaps) sit in the scratch, for `n` slots; each
/// is indexed by the class's root slot.
#[derive(Clone, Copy)]
pub(super) struct Words {
    /// Bytes of the class: its longest member.
    pub(super) hull: usize,
    /// Members live at the sweep's current op.
    pub(super) count: usize,
    /// Bytes the class's live-set entry covers: its hull, or, for the output of an in-place
    /// op while the input it took over is still live, the longer of the two.
    pub(super) span: usize,
    /// The last op at which any member is live.
    pub(super) end: usize,
    /// The first op at which any member is live.
    pub(super) start: usize,
    /// For an in-place output's class: 1 + the slot of the input it takes over (0: none).
    pub(super) takes: usize,
    /// For an in-place input's class: 1 + the slot of the output that takes it (0: none).
    pub(super) taken_by: usize,
    /// The bitset of the order checks.
    pub(super) seen: usize,
}

impl Words {
    pub(super) const PER_SLOT: usize = 7;

    pub(super) const fn new(n: usize) -> Words {
        Words {
            hull: 0,
            count: n,
            span: 2 * n,
            end: 3 * n,
            takes: 4 * n,
            taken_by: 5 * n,
            start: 6 * n,
            seen: 7 * n,
        }
    }
}

/// 64-bit words holding `n` bits (at least one).
pub(super) const fn words(n: usize) -> usize {
    if n <= 64 { 1 } else { n.div_ceil(64) }
}

/// "No slot", for the live set's queries.
pub(super) const NO_SLOT: usize = usize::MAX;

/// Where each level of the live set's bitset starts in the scratch: level 0 has one bit per
/// slot, each level above one bit per word of the level below, the top level one word.
#[derive(Clone, Copy)]
pub(super) struct Levels {
    pub(super) start: [usize; 12],
    pub(super) count: usize,
    pub(super) end: usize,
}

impl Levels {
    pub(super) const fn new(n: usize, base: usize) -> Levels {
        let mut l = Levels {
            start: [0; 12],
            count: 0,
            end: base,
        };
        let mut len = words(n);
        loop {
            l.start[l.count] = l.end;
            l.count += 1;
            l.end += len;
            // 64^11 bits exceed any slice, so the array cannot overflow.
            if len == 1 || l.count == l.start.len() {
                break;
            }
            len = words(len);
        }
        l
    }

    pub(super) const fn insert(&self, w: &mut [u64], mut i: usize) {
        let mut l = 0;
        while l < self.count {
            let at = self.start[l] + i / 64;
            let was = w[at];
            w[at] = was | (1u64 << (i % 64));
            if was != 0 {
                return;
            }
            i /= 64;
            l += 1;
        }
    }

    pub(super) const fn remove(&self, w: &mut [u64], mut i: usize) {
        let mut l = 0;
        while l < self.count {
            let at = self.start[l] + i / 64;
            w[at] &= !(1u64 << (i % 64));
            if w[at] != 0 {
                return;
            }
            i /= 64;
            l += 1;
        }
    }

    /// The smallest member above `i`, or [`NO_SLOT`].
    pub(super) const fn next(&self, w: &[u64], i: usize) -> usize {
        self.nearest(w, i, true)
    }

    /// The largest member below `i`, or [`NO_SLOT`].
    pub(super) const fn prev(&self, w: &[u64], i: usize) -> usize {
        self.nearest(w, i, false)
    }

    /// The nearest member above `i` (`up`) or below it, or [`NO_SLOT`]: climbs the levels
    /// until a word holds a bit on that side, then descends to the nearest leaf under it.
    const fn nearest(&self, w: &[u64], mut i: usize, up: bool) -> usize {
        let mut l = 0;
        loop {
            if l == self.count {
                return NO_SLOT;
            }
            let word = w[self.start[l] + i / 64];
            let bit = i % 64;
            let side = if up {
                if bit == 63 {
                    0
                } else {
                    word & (!0u64 << (bit + 1))
                }
            } else {
                word & ((1u64 << bit) - 1)
            };
            if side != 0 {
                i = (i / 64) * 64 + nearest_bit(side, up);
                break;
            }
            i /= 64;
            l += 1;
        }
        while l > 0 {
            l -= 1;
            i = i * 64 + nearest_bit(w[self.start[l] + i], up);
        }
        i
    }
}

/// The lowest set bit of the non-zero `word` when searching up, else its highest.
const fn nearest_bit(word: u64, up: bool) -> usize {
    if up {
        word.trailing_zeros() as usize
    } else {
        63 - word.leading_zeros() as usize
    }
}
