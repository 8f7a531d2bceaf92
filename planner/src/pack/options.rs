//! Options of the searching packers (`hill_climb`, `auto`) and how option values are
//! read and refused.

use std::string::String;
use std::time::Duration;

/// Public options structs whose `Default` gives each field the value written after its `=`.
macro_rules! with_defaults {
    ($(
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($(#[$doc:meta])* pub $field:ident: $ty:ty = $default:expr,)*
        }
    )*) => {$(
        $(#[$meta])*
        pub struct $name {
            $($(#[$doc])* pub $field: $ty,)*
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $($field: $default,)*
                }
            }
        }
    )*};
}
pub(super) use with_defaults;

with_defaults! {
    /// Options of the `hill_climb` planner.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct HillClimbOptions {
        /// Re-packs to try (default 300).
        pub iterations: u32 = 300,
        /// Seed of the move generator (default 0).
        pub seed: u64 = 0,
        /// Stop after this many re-packs without improvement (default 50; `None`: never).
        pub max_stall_iterations: Option<u32> = Some(50),
        /// Most work of the climb, in items placed plus placed neighbours examined, as
        /// `auto`'s `budget` (default 4 000 000): re-packs cost up to the number of items, so
        /// without it 300 re-packs of 10^5 items took 45 s and of 10^6 items past 300 s.
        pub budget: u64 = 4_000_000,
    }

    /// Options of the `auto` planner, the default policy.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct AutoOptions {
        /// Most re-packs of the hill climb (default 2000).
        pub iterations: u32 = 2000,
        /// Seed of the move generator (default 0).
        pub seed: u64 = 0,
        /// Stop the climb after this many re-packs without improvement (default 400; `None`:
        /// never).
        pub max_stall_iterations: Option<u32> = Some(400),
        /// Most work of the hill climb, in items placed plus placed neighbours examined: the
        /// deterministic budget that bounds planning time on large problems (default
        /// 4 000 000; a unit costs 15 to 60 ns on the benchmark machine, the most on problems
        /// where every item overlaps hundreds of others).
        pub budget: u64 = 4_000_000,
        /// Most items placed by the first stage's greedy passes (the reference pass, TFLM's
        /// order and the orders of best-of-greedy), over whole passes: the reference always
        /// runs, and each later pass only while what is left covers as many items as the
        /// reference placed (default 1 500 000: all thirteen passes up to 107 000 items, four
        /// at 300 000, none after the reference from 750 000). On larger problems fewer orders
        /// are tried, which keeps planning near-linear in the number of items.
        pub seed_budget: u64 = 1_500_000,
        /// Most nodes of the exact search that follows the climb while the gap to the lower
        /// bound is open (default 50 000; 0: no exact search); on a decomposition's parts too
        /// large for it, the most nodes of the windowed searches around the part's peak.
        pub node_budget: u64 = 50_000,
        /// Problems with more items than this skip the exact search (default 1000): on them a
        /// node costs more and the climb's gap is typically a few bytes. A decomposition's part
        /// with more items than this that is still above its target gets the windowed searches.
        pub exact_max_items: u32 = 1000,
        /// A decomposition's part gets the exact search up to this many items (default 4000;
        /// at least [`AutoOptions::exact_max_items`] in any case), before any windowed search.
        /// A part's time cuts keep its nodes cheap. Measured on the real-trace-like problems of
        /// `examples/pack_scale.rs`: the parts deciding the height of 10k #0 (2583 and 3853
        /// items) and 30k #1 (3433) reach their targets in the whole-part search and in no
        /// window; parts of 5875 and 8026 items (60k #0, #1) gained nothing from it at several
        /// times the cost.
        pub part_exact_max_items: u32 = 4000,
        /// Large items first: where the exact search or the windows may run (or under a time
        /// limit), once the first stage is above its target, the items of at least 1 % (then
        /// 0.3 %) of the lower bound are packed by the exact search alone and the rest placed
        /// around them (`pack/large.rs`), within [`AutoOptions::node_budget`] nodes more; a share
        /// with more large items than this is skipped (default 4000; 0: never).
        pub large_max_items: u32 = 4000,
        /// The window around the op of most load: once the first stages are above the target,
        /// the items live in windows of up to 256, 1024 and 2048 items (no more than this), their
        /// lifetimes clipped to the window, are packed by the exact search, keep those offsets,
        /// and the rest is placed around them (`large::peak_window`), within
        /// [`AutoOptions::node_budget`] nodes more (default 2048; 0: never).
        pub peak_max_items: u32 = 2048,
        /// Problems with at least this many items are decomposed into independent parts (items
        /// live over the whole span stacked at the bottom, the rest cut at time boundaries no
        /// item crosses) and the parts planned one by one (default 2000; see [`AutoOptions::threads`]).
        pub split_min_items: u32 = 2000,
        /// Threads for the first stage's passes after the reference and for the parts of a
        /// decomposed problem (default 0: one per core). The plan does not depend on it.
        pub threads: u32 = 0,
        /// Plan for about this long instead of counting work: the climb and the exact search run
        /// until the time is up or the lower bound is reached, whichever comes first (default
        /// none). The plan then depends on the machine and its load; without it, it never does.
        pub time_limit: Option<Duration> = None,
        /// A decomposition's parts stop once the whole height would be within this many
        /// millionths of the lower bound (default 0: only at the bound). `planner plan X.csv`
        /// plans with 1: on allocation traces in the gigabytes the exact searches after the
        /// first stages spent 6.4 of 6.8 s of bert_base (5620 buffers, 15.7 GB) on its last 4
        /// bytes. Where the bound is under a megabyte, 1 is 0 bytes.
        pub slack_ppm: u32 = 0,
    }
}

/// A planner option value as written in a manifest or on the command line.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    /// An integer.
    Int(i64),
    /// A string, such as `"none"`.
    Str(String),
    /// A boolean.
    Bool(bool),
    /// A float.
    Float(f64),
}

impl std::fmt::Display for OptionValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionValue::Int(v) => write!(f, "{v}"),
            OptionValue::Str(v) => write!(f, "{v:?}"),
            OptionValue::Bool(v) => write!(f, "{v}"),
            OptionValue::Float(v) => write!(f, "{v}"),
        }
    }
}

/// A bad planner option: which key (if one) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError {
    /// The option at fault; `None` when the planner name itself is wrong.
    pub key: Option<String>,
    /// What is wrong.
    pub kind: OptionErrorKind,
    /// Problem and fix.
    pub message: String,
}

/// What is wrong with a planner choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionErrorKind {
    /// No packer has that name.
    UnknownPlanner,
    /// Options are given to a packer that takes none.
    TakesNoOptions,
    /// The packer has no option of that key.
    UnknownOption,
    /// The value does not have the option's type or range.
    BadValue,
}
