//! Proptest strategies shared by the packing property tests (`pack_props.rs`,
//! `report_bound.rs`), apart from `common/mod.rs` because planner-build's tests, which
//! include that, have no proptest.

use planner::pack::Item;
use proptest::prelude::*;

/// A random item: of size 0, below `sizes.0` or below `sizes.1`; its first op below
/// `starts`; live for up to 2 more ops or below `lens`; aligned to 2^0 .. 2^(`aligns` - 1);
/// spillable as `spillable` draws.
pub fn item(
    sizes: (u64, u64),
    starts: u32,
    lens: u32,
    aligns: u32,
    spillable: impl Strategy<Value = bool>,
) -> impl Strategy<Value = Item> {
    (
        prop_oneof![Just(0u64), 1u64..sizes.0, sizes.0..sizes.1],
        0u32..starts,
        prop_oneof![0u32..3, 0u32..lens],
        0u32..aligns,
        spillable,
    )
        .prop_map(|(size, start, len, align_log, spillable)| Item {
            size,
            start,
            end: start + len,
            align: 1 << align_log,
            fixed: None,
            spillable,
        })
}
