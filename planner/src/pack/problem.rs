//! What packers see: [`Item`], [`Problem`], the [`Packing`] they return and its
//! [`Certificate`].

use std::vec::Vec;

/// One buffer to place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Bytes.
    pub size: u64,
    /// First op at which it is live.
    pub start: u32,
    /// Last op at which it is live (inclusive).
    pub end: u32,
    /// Offset alignment (a power of two, at least 1).
    pub align: u64,
    /// A fixed offset the packer must keep.
    pub fixed: Option<u64>,
    /// May be left out (spilled to the next memory) when it does not fit under the capacity.
    pub spillable: bool,
}

impl Item {
    /// A buffer of `size` bytes live over ops `start..=end`: 1-byte alignment, no fixed
    /// offset, never spilled.
    pub fn new(size: u64, start: u32, end: u32) -> Item {
        Item {
            size,
            start,
            end,
            align: 1,
            fixed: None,
            spillable: false,
        }
    }

    /// True when the two items are live at a common op.
    pub fn overlaps_in_time(&self, other: &Item) -> bool {
        self.start <= other.end && other.start <= self.end
    }
}

/// Items to place in one arena, with an optional capacity.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Problem {
    /// The items.
    pub items: Vec<Item>,
    /// Most bytes the arena may take. Spillable items that would pass it are left out;
    /// unspillable ones are placed anyway and the height says by how much it is passed.
    pub capacity: Option<u64>,
}

/// Offsets for a [`Problem`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packing {
    /// One entry per item: its offset, or `None` for a spilled item.
    pub offsets: Vec<Option<u64>>,
    /// End of the highest placed item.
    pub height: u64,
}

impl Packing {
    /// Bytes of the spilled items.
    pub fn spilled_bytes(&self, problem: &Problem) -> u64 {
        self.offsets
            .iter()
            .zip(&problem.items)
            .filter(|(o, _)| o.is_none())
            .map(|(_, it)| it.size)
            .sum()
    }
}

/// How good a packing is: its height against a bound no packing of the same items can beat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Certificate {
    /// End of the highest placed item.
    pub height: u64,
    /// [`height_lower_bound`](super::height_lower_bound) of the placed items: no packing of them is lower.
    pub lower_bound: u64,
    /// `aligned_live_sum` of the placed items (sizes rounded up to their alignment), for
    /// comparison with other planners; at most the height plus the padding of one item.
    pub aligned_bound: u64,
    /// True when no lower height exists for these items: the height equals
    /// [`Certificate::lower_bound`], or an exhaustive search proved it.
    pub optimal: bool,
}

impl Certificate {
    /// The certificate of a packing whose height is `height` and whose items' bounds are
    /// `lower_bound` ([`height_lower_bound`](super::height_lower_bound)) and `aligned_bound` (`aligned_live_sum`): optimal
    /// when the height reaches the first.
    pub fn new(height: u64, lower_bound: u64, aligned_bound: u64) -> Certificate {
        Certificate {
            height,
            lower_bound,
            aligned_bound,
            optimal: height <= lower_bound,
        }
    }

    /// The same certificate, marked optimal by an exhaustive search that proved no lower
    /// height fits.
    pub fn proven_optimal(self) -> Certificate {
        Certificate {
            optimal: true,
            ..self
        }
    }

    /// Height over lower bound (1.0 when both are zero).
    pub fn ratio(&self) -> f64 {
        if self.lower_bound == 0 {
            1.0
        } else {
            self.height as f64 / self.lower_bound as f64
        }
    }

    /// Bytes above the lower bound.
    pub fn gap(&self) -> u64 {
        self.height.saturating_sub(self.lower_bound)
    }
}
