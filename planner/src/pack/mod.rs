//! Packing: offsets within one arena.
//!
//! Packers see an abstract [`Problem`]: items with a size, an inclusive op interval, an
//! alignment, optionally a fixed offset, and whether they may spill to the next memory when
//! the arena's capacity is reached. They know nothing about tensors or manifests, so the same
//! code plans real models and MiniMalloc CSV instances.
//!
//! Every packer is deterministic: the same problem gives the same offsets on every machine.

mod best_of;
mod busy;
mod greedy;
mod hill_climb;
mod large;
mod split;
mod window;

use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::time::{Duration, Instant};
use std::vec::Vec;

use crate::plan::align_up;

use greedy::Placer;
pub use greedy::{GapRule, greedy_order, size_order};
/// The seeded generator of the climb, for the crate's tests.
#[cfg(test)]
pub(crate) use hill_climb::Rng;
use optimal::OptimalOptions;
pub mod optimal;
pub mod tflm;

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
    /// [`height_lower_bound`] of the placed items: no packing of them is lower.
    pub lower_bound: u64,
    /// [`aligned_live_sum`] of the placed items (sizes rounded up to their alignment), for
    /// comparison with other planners; at most the height plus the padding of one item.
    pub aligned_bound: u64,
    /// True when no lower height exists for these items: the height equals
    /// [`Certificate::lower_bound`], or an exhaustive search proved it.
    pub optimal: bool,
}

impl Certificate {
    /// The certificate of a packing whose height is `height` and whose items' bounds are
    /// `lower_bound` ([`height_lower_bound`]) and `aligned_bound` ([`aligned_live_sum`]): optimal
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

/// The certificate of `packing`: its height against the bounds of the items it placed.
pub fn certify(problem: &Problem, packing: &Packing) -> Certificate {
    certify_known(problem, packing, None)
}

/// [`certify`], with the bound of a set of placed items already computed (`known`: the set
/// and its [`lower_bound_of`]), used when the packing places exactly those items.
fn certify_known(
    problem: &Problem,
    packing: &Packing,
    known: Option<&(Vec<bool>, u64)>,
) -> Certificate {
    let placed: Vec<bool> = packing.offsets.iter().map(Option::is_some).collect();
    let bound = match known {
        Some((set, bound)) if *set == placed => *bound,
        _ => lower_bound_of(problem, Some(&placed)),
    };
    let placed_items = Problem {
        items: problem
            .items
            .iter()
            .zip(&placed)
            .filter(|&(_, &p)| p)
            .map(|(it, _)| it.clone())
            .collect(),
        capacity: None,
    };
    Certificate::new(packing.height, bound, aligned_live_sum(&placed_items))
}

/// Options of the `hill_climb` planner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HillClimbOptions {
    /// Re-packs to try (default 300).
    pub iterations: u32,
    /// Seed of the move generator (default 0).
    pub seed: u64,
    /// Stop after this many re-packs without improvement (default 50; `None`: never).
    pub max_stall_iterations: Option<u32>,
}

impl Default for HillClimbOptions {
    fn default() -> Self {
        HillClimbOptions {
            iterations: 300,
            seed: 0,
            max_stall_iterations: Some(50),
        }
    }
}

/// Options of the `auto` planner, the default policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoOptions {
    /// Most re-packs of the hill climb (default 2000).
    pub iterations: u32,
    /// Seed of the move generator (default 0).
    pub seed: u64,
    /// Stop the climb after this many re-packs without improvement (default 400; `None`:
    /// never).
    pub max_stall_iterations: Option<u32>,
    /// Most work of the hill climb, in items placed plus placed neighbours examined: the
    /// deterministic budget that bounds planning time on large problems (default
    /// 4 000 000; a unit costs 15 to 60 ns on the benchmark machine, the most on problems
    /// where every item overlaps hundreds of others).
    pub budget: u64,
    /// Most items placed by the first stage's greedy passes (the reference pass, TFLM's
    /// order and the orders of best-of-greedy), over whole passes: the reference always
    /// runs, and each later pass only while what is left covers as many items as the
    /// reference placed (default 1 500 000: all thirteen passes up to 107 000 items, four
    /// at 300 000, none after the reference from 750 000). On larger problems fewer orders
    /// are tried, which keeps planning near-linear in the number of items.
    pub seed_budget: u64,
    /// Most nodes of the exact search that follows the climb while the gap to the lower
    /// bound is open (default 50 000; 0: no exact search); on a decomposition's parts too
    /// large for it, the most nodes of the windowed searches around the part's peak.
    pub node_budget: u64,
    /// Problems with more items than this skip the exact search (default 1000): on them a
    /// node costs more and the climb's gap is typically a few bytes. A decomposition's part
    /// with more items than this that is still above its target gets the windowed searches.
    pub exact_max_items: u32,
    /// A decomposition's part gets the exact search up to this many items (default 4000;
    /// at least [`AutoOptions::exact_max_items`] in any case), before any windowed search.
    /// A part's time cuts keep its nodes cheap. Measured on the real-trace-like problems of
    /// `examples/pack_scale.rs`: the parts deciding the height of 10k #0 (2583 and 3853
    /// items) and 30k #1 (3433) reach their targets in the whole-part search and in no
    /// window; parts of 5875 and 8026 items (60k #0, #1) gained nothing from it at several
    /// times the cost.
    pub part_exact_max_items: u32,
    /// Large items first: where the exact search or the windows may run (or under a time
    /// limit), once the first stage is above its target, the items of at least 1 % (then
    /// 0.3 %) of the lower bound are packed by the exact search alone and the rest placed
    /// around them (`pack/large.rs`), within [`AutoOptions::node_budget`] nodes more; a share
    /// with more large items than this is skipped (default 4000; 0: never).
    pub large_max_items: u32,
    /// The window around the op of most load: once the first stages are above the target,
    /// the items live in windows of up to 256, 1024 and 2048 items (no more than this), their
    /// lifetimes clipped to the window, are packed by the exact search, keep those offsets,
    /// and the rest is placed around them (`large::peak_window`), within
    /// [`AutoOptions::node_budget`] nodes more (default 2048; 0: never).
    pub peak_max_items: u32,
    /// Problems with at least this many items are decomposed into independent parts (items
    /// live over the whole span stacked at the bottom, the rest cut at time boundaries no
    /// item crosses) and the parts planned one by one (default 2000; see [`AutoOptions::threads`]).
    pub split_min_items: u32,
    /// Threads for the first stage's passes after the reference and for the parts of a
    /// decomposed problem (default 0: one per core). The plan does not depend on it.
    pub threads: u32,
    /// Plan for about this long instead of counting work: the climb and the exact search run
    /// until the time is up or the lower bound is reached, whichever comes first (default
    /// none). The plan then depends on the machine and its load; without it, it never does.
    pub time_limit: Option<Duration>,
    /// A decomposition's parts stop once the whole height would be within this many
    /// millionths of the lower bound (default 0: only at the bound). `planner plan X.csv`
    /// plans with 1: on allocation traces in the gigabytes the exact searches after the
    /// first stages spent 6.4 of 6.8 s of bert_base (5620 buffers, 15.7 GB) on its last 4
    /// bytes. Where the bound is under a megabyte, 1 is 0 bytes.
    pub slack_ppm: u32,
}

impl Default for AutoOptions {
    fn default() -> Self {
        AutoOptions {
            iterations: 2000,
            seed: 0,
            max_stall_iterations: Some(400),
            budget: 4_000_000,
            seed_budget: 1_500_000,
            node_budget: 50_000,
            exact_max_items: 1000,
            part_exact_max_items: 4000,
            large_max_items: 4000,
            peak_max_items: 2048,
            split_min_items: 2000,
            threads: 0,
            time_limit: None,
            slack_ppm: 0,
        }
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

/// Which packer to run, with its options.
///
/// The default ([`PlannerKind::Auto`]) is what runs when a manifest names no planner:
///
/// 1. `greedy_by_size`; done if it reaches the lower bound.
/// 2. Best-of-greedy: TFLM's planner's packing ([`tflm`]), then six orders (size, start,
///    end, area, duration, number of conflicts) times two gap rules (lowest offset, best fit)
///    over the items `greedy_by_size` placed, on [`AutoOptions::threads`] threads; done at
///    the lower bound, and passes only while [`AutoOptions::seed_budget`] covers them.
/// 3. Large items first, on problems where step 5 or the windows may run (or under a time
///    limit) and that spill nothing: the items of at least 1 %, then 0.3 %, of the lower
///    bound get the exact search alone, within [`AutoOptions::node_budget`] nodes, and the
///    others are placed around them by `greedy_by_size`; done when that reaches the lower
///    bound (see [`AutoOptions::large_max_items`]).
///    Where it runs, next and while still above the target, the items
///    live in a window around the op of most load are packed exactly with their lifetimes
///    clipped to it and the rest placed around them ([`AutoOptions::peak_max_items`]);
///    done when the lower of the two reaches the lower bound.
/// 4. The hill climb from the best of steps 1-2, stopping at the lower bound, after
///    [`AutoOptions::iterations`] re-packs, [`AutoOptions::max_stall_iterations`] re-packs
///    without progress, or [`AutoOptions::budget`] units of work, whichever comes first; the
///    lower of its packing and step 3's goes on.
/// 5. While the gap is still open, on problems of at most [`AutoOptions::exact_max_items`]
///    items, the exact search ([`optimal::minimize`]) over the same items, from that
///    packing, for at most [`AutoOptions::node_budget`] nodes; it either proves the packing
///    optimal, finds a lower one, or leaves it as it is.
///
/// Problems of at least [`AutoOptions::split_min_items`] items are first decomposed: items
/// live over the whole span are stacked at the bottom, the rest is cut at time boundaries no
/// item crosses (recursively), and each part runs the stages above on its own, in parallel on
/// [`AutoOptions::threads`] threads, stopping once it is at the whole problem's lower bound.
/// On a part, step 5 runs up to [`AutoOptions::part_exact_max_items`] items. A part of more
/// than `exact_max_items` items still above its target after that gets exact searches in
/// windows around its peak (`pack/window.rs`): the items live only near the item reaching
/// the height are re-packed, the others stay fixed, within [`AutoOptions::node_budget`]
/// nodes more.
///
/// Every limit counts work, not time, so the plan is the same on every machine, unless
/// [`AutoOptions::time_limit`] is set.
///
/// Every stage keeps the items `greedy_by_size` spills spilled and replaces the best only by a
/// strictly lower packing, so `auto`, `best_of_greedy` and `hill_climb` are never worse than
/// `greedy_by_size`, in this arena or, since the same items spill, in the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannerKind {
    /// First fit in lifetime-start order, lowest aligned offset.
    Greedy,
    /// Largest first (then start, then index), lowest aligned gap among time-overlapping
    /// items.
    GreedyBySize,
    /// The best of several orders and both gap rules.
    BestOfGreedy,
    /// Seeded local search over placement orders, from the best of greedy.
    HillClimb(HillClimbOptions),
    /// Exact search over the items `greedy_by_size` places, from the default hill climb's
    /// packing: the lowest height, proven, unless the node budget runs out first.
    Optimal(OptimalOptions),
    /// The default policy: greedy rules, then a bounded hill climb and a bounded exact
    /// search while the gap to the lower bound is open.
    Auto(AutoOptions),
    /// TensorFlow Lite Micro's `GreedyMemoryPlanner` ([`tflm`]): sizes rounded up to 16,
    /// largest first (ties to the later item), lowest gap; what TFLM would need.
    Tflm,
}

impl Default for PlannerKind {
    fn default() -> Self {
        PlannerKind::Auto(AutoOptions::default())
    }
}

/// One packer of the table: its manifest name, the option keys it takes, how it reads an
/// option and how it runs.
#[derive(Clone, Copy)]
pub struct Packer {
    /// The manifest name (`memory.planner`).
    pub name: &'static str,
    /// The keys of `memory.planner_options` it takes (empty: none).
    pub keys: &'static [&'static str],
    /// The planner with default options.
    default: fn() -> PlannerKind,
    /// Sets one option (a key of `keys`) on a planner of this packer.
    set: fn(&mut PlannerKind, &str, &OptionValue) -> Result<(), OptionError>,
    /// Packs with a planner of this packer.
    run: fn(&PlannerKind, &mut Run<'_>) -> Packing,
}

impl std::fmt::Debug for Packer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Packer")
            .field("name", &self.name)
            .field("keys", &self.keys)
            .finish_non_exhaustive()
    }
}

/// Every packer, in the order help texts list them.
pub const PACKERS: &[Packer] = &[
    Packer {
        name: "greedy",
        keys: &[],
        default: || PlannerKind::Greedy,
        set: set_nothing,
        run: |_, run| {
            let order = greedy_order(run.placer.problem);
            run.placer.place_with_spill(&order, GapRule::Lowest)
        },
    },
    Packer {
        name: "greedy_by_size",
        keys: &[],
        default: || PlannerKind::GreedyBySize,
        set: set_nothing,
        run: |_, run| {
            let order = size_order(run.placer.problem);
            run.placer.place_with_spill(&order, GapRule::Lowest)
        },
    },
    Packer {
        name: "best_of_greedy",
        keys: &[],
        default: || PlannerKind::BestOfGreedy,
        set: set_nothing,
        run: |_, run| run.search(None),
    },
    Packer {
        name: "tflm",
        keys: &[],
        default: || PlannerKind::Tflm,
        set: set_nothing,
        run: |_, run| tflm::pack(run.placer.problem),
    },
    Packer {
        name: "hill_climb",
        keys: &["iterations", "seed", "max_stall_iterations"],
        default: || PlannerKind::HillClimb(HillClimbOptions::default()),
        set: set_hill_climb,
        run: run_hill_climb,
    },
    Packer {
        name: "optimal",
        keys: &["node_budget", "time_limit_ms"],
        default: || PlannerKind::Optimal(OptimalOptions::default()),
        set: set_optimal,
        run: run_optimal,
    },
    Packer {
        name: "auto",
        keys: &[
            "iterations",
            "seed",
            "max_stall_iterations",
            "budget",
            "seed_budget",
            "node_budget",
            "exact_max_items",
            "part_exact_max_items",
            "large_max_items",
            "peak_max_items",
            "split_min_items",
            "threads",
            "time_limit_ms",
            "slack_ppm",
        ],
        default: || PlannerKind::Auto(AutoOptions::default()),
        set: set_auto,
        run: run_auto,
    },
];

const NAME_LIST: [&str; PACKERS.len()] = {
    let mut names = [""; PACKERS.len()];
    let mut k = 0;
    while k < PACKERS.len() {
        names[k] = PACKERS[k].name;
        k += 1;
    }
    names
};

impl PlannerKind {
    /// Every planner name, for help texts and did-you-mean (the names of [`PACKERS`]).
    pub const NAMES: &'static [&'static str] = &NAME_LIST;

    /// The table row of this planner.
    pub fn packer(&self) -> &'static Packer {
        let me = std::mem::discriminant(self);
        PACKERS
            .iter()
            .find(|p| std::mem::discriminant(&(p.default)()) == me)
            .unwrap_or(&PACKERS[0])
    }

    /// The planner's manifest name.
    pub fn name(&self) -> &'static str {
        self.packer().name
    }

    /// Builds a planner from its name and options; options a planner does not take are
    /// an error that says so.
    pub fn from_name(
        name: &str,
        options: &BTreeMap<String, OptionValue>,
    ) -> Result<PlannerKind, OptionError> {
        let Some(packer) = PACKERS.iter().find(|p| p.name == name) else {
            let hint = crate::error::did_you_mean(name, PlannerKind::NAMES.iter().copied())
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            return Err(OptionError {
                key: None,
                kind: OptionErrorKind::UnknownPlanner,
                message: format!(
                    "unknown planner `{name}`{hint}; choose one of {}",
                    PlannerKind::NAMES.join(", ")
                ),
            });
        };
        let mut kind = (packer.default)();
        for (key, value) in options {
            if packer.keys.is_empty() {
                return Err(OptionError {
                    key: Some(key.clone()),
                    kind: OptionErrorKind::TakesNoOptions,
                    message: format!(
                        "planner `{name}` takes no options, but `{key}` is given; remove memory.planner_options or pick `hill_climb` or `auto`"
                    ),
                });
            }
            if !packer.keys.contains(&key.as_str()) {
                return Err(unknown_option(name, key, packer.keys));
            }
            (packer.set)(&mut kind, key, value)?;
        }
        Ok(kind)
    }
}

fn set_nothing(_: &mut PlannerKind, key: &str, _: &OptionValue) -> Result<(), OptionError> {
    Err(unknown_option("", key, &[]))
}

fn set_hill_climb(kind: &mut PlannerKind, key: &str, v: &OptionValue) -> Result<(), OptionError> {
    let (name, keys) = (kind.name(), kind.packer().keys);
    let PlannerKind::HillClimb(o) = kind else {
        return Err(unknown_option(name, key, keys));
    };
    match key {
        "iterations" => o.iterations = int_option(key, v, 0)?,
        "seed" => o.seed = seed_option(key, v)?,
        "max_stall_iterations" => o.max_stall_iterations = stall_option(key, v)?,
        _ => return Err(unknown_option(name, key, keys)),
    }
    Ok(())
}

fn set_optimal(kind: &mut PlannerKind, key: &str, v: &OptionValue) -> Result<(), OptionError> {
    let (name, keys) = (kind.name(), kind.packer().keys);
    let PlannerKind::Optimal(o) = kind else {
        return Err(unknown_option(name, key, keys));
    };
    match key {
        "node_budget" => o.node_budget = seed_option(key, v)?,
        "time_limit_ms" => o.time_limit = Some(Duration::from_millis(seed_option(key, v)?)),
        _ => return Err(unknown_option(name, key, keys)),
    }
    Ok(())
}

fn set_auto(kind: &mut PlannerKind, key: &str, v: &OptionValue) -> Result<(), OptionError> {
    let (name, keys) = (kind.name(), kind.packer().keys);
    let PlannerKind::Auto(o) = kind else {
        return Err(unknown_option(name, key, keys));
    };
    match key {
        "iterations" => o.iterations = int_option(key, v, 0)?,
        "seed" => o.seed = seed_option(key, v)?,
        "max_stall_iterations" => o.max_stall_iterations = stall_option(key, v)?,
        "budget" => o.budget = seed_option(key, v)?,
        "seed_budget" => o.seed_budget = seed_option(key, v)?,
        "node_budget" => o.node_budget = seed_option(key, v)?,
        "exact_max_items" => o.exact_max_items = int_option(key, v, 0)?,
        "part_exact_max_items" => o.part_exact_max_items = int_option(key, v, 0)?,
        "large_max_items" => o.large_max_items = int_option(key, v, 0)?,
        "peak_max_items" => o.peak_max_items = int_option(key, v, 0)?,
        "split_min_items" => o.split_min_items = int_option(key, v, 0)?,
        "threads" => o.threads = int_option(key, v, 0)?,
        "time_limit_ms" => o.time_limit = Some(Duration::from_millis(seed_option(key, v)?)),
        "slack_ppm" => o.slack_ppm = int_option(key, v, 0)?,
        _ => return Err(unknown_option(name, key, keys)),
    }
    Ok(())
}

fn unknown_option(planner: &str, key: &str, keys: &[&str]) -> OptionError {
    let hint = crate::error::did_you_mean(key, keys.iter().copied())
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    let list: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    OptionError {
        key: Some(key.to_string()),
        kind: OptionErrorKind::UnknownOption,
        message: format!(
            "planner `{planner}` has no option `{key}`{hint}; it takes {}",
            list.join(", ")
        ),
    }
}

fn bad_value(key: &str, value: &OptionValue, want: &str) -> OptionError {
    OptionError {
        key: Some(key.to_string()),
        kind: OptionErrorKind::BadValue,
        message: format!("planner option `{key}` is {value}; it must be {want}"),
    }
}

fn int_option(key: &str, value: &OptionValue, min: i64) -> Result<u32, OptionError> {
    match value {
        OptionValue::Int(v) if *v >= min && *v <= i64::from(u32::MAX) => Ok(*v as u32),
        _ => Err(bad_value(
            key,
            value,
            &format!("a whole number from {min} to {}", u32::MAX),
        )),
    }
}

fn seed_option(key: &str, value: &OptionValue) -> Result<u64, OptionError> {
    match value {
        OptionValue::Int(v) if *v >= 0 => Ok(*v as u64),
        _ => Err(bad_value(key, value, "a whole number >= 0")),
    }
}

fn stall_option(key: &str, value: &OptionValue) -> Result<Option<u32>, OptionError> {
    match value {
        OptionValue::Str(s) if s == "none" => Ok(None),
        _ => int_option(key, value, 1).map(Some).map_err(|_| {
            bad_value(
                key,
                value,
                &format!("a whole number from 1 to {} or \"none\"", u32::MAX),
            )
        }),
    }
}

/// Packs `problem` with the chosen planner.
pub fn pack(kind: &PlannerKind, problem: &Problem) -> Packing {
    pack_report(kind, problem).packing
}

/// A packing with its certificate and what the search did.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The offsets.
    pub packing: Packing,
    /// Height against the lower bound.
    pub certificate: Certificate,
    /// Work done.
    pub stats: SearchStats,
}

/// What a planner did: deterministic counts, no times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// For the search planners, the greedy order (a name of [`GREEDY_ORDERS`]) and gap rule
    /// whose packing seeded the search.
    pub seed: Option<(&'static str, GapRule)>,
    /// Hill-climb re-packs tried.
    pub iterations: u32,
    /// Hill-climb re-packs that lowered the height.
    pub improvements: u32,
    /// Items placed in all, re-packs included.
    pub placements: u64,
    /// Work units spent (items placed plus placed neighbours examined), what
    /// [`AutoOptions::budget`] limits.
    pub work: u64,
    /// Nodes of the exact search.
    pub nodes: u64,
    /// Independent parts the problem was planned as (0 or 1: planned whole).
    pub parts: u32,
}

/// The placement orders best-of-greedy tries, by name.
pub const GREEDY_ORDERS: &[&str] = best_of::ORDERS;

/// Packs `problem` with the chosen planner and reports on the result.
pub fn pack_report(kind: &PlannerKind, problem: &Problem) -> Report {
    let mut run = Run {
        placer: Placer::new(problem),
        stats: SearchStats::default(),
        proven: false,
        threads: 0,
        known_bound: None,
    };
    let packing = (kind.packer().run)(kind, &mut run);
    let mut stats = run.stats;
    stats.placements += run.placer.placements;
    stats.work += run.placer.work;
    let mut certificate = certify_known(problem, &packing, run.known_bound.as_ref());
    if run.proven {
        certificate = certificate.proven_optimal();
    }
    Report {
        packing,
        certificate,
        stats,
    }
}

/// The state a packer runs with: the placement engine, the counts it reports, and whether an
/// exact search proved its packing optimal.
pub struct Run<'p> {
    placer: Placer<'p>,
    stats: SearchStats,
    proven: bool,
    /// Threads for the first stage's passes, as the `threads` option gives them (0: one per
    /// core; the result does not depend on it).
    threads: u32,
    /// The items the first stage placed and their [`lower_bound_of`], which the searches
    /// after it keep: the certificate need not compute it again (a sweep over every item).
    known_bound: Option<(Vec<bool>, u64)>,
}

/// Problems with fewer items run the first stage's passes on one thread.
const THREADED_FROM: usize = 4096;

/// Threads for `threads` as an option gives it: 0 means one per core.
fn threads_for(threads: u32) -> usize {
    match threads {
        0 => std::thread::available_parallelism().map_or(1, |t| t.get()),
        t => t as usize,
    }
}

impl std::fmt::Debug for Run<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("stats", &self.stats)
            .field("proven", &self.proven)
            .finish_non_exhaustive()
    }
}

impl Run<'_> {
    /// Best-of-greedy, then the hill climb within `budget` when one is given.
    fn search(&mut self, budget: Option<hill_climb::Budget>) -> Packing {
        self.search_to(budget, 0, u64::MAX, None)
    }

    /// [`Run::search`], stopping as soon as the height is at most `target` (or the lower
    /// bound), with at most `seed_budget` placements in the first stage's passes. With
    /// `large` (nodes, most items), the large items are placed exactly and the rest around
    /// them ([`large::lower`]) between the first stage and the climb, which is skipped when
    /// that reaches the target.
    fn search_to(
        &mut self,
        budget: Option<hill_climb::Budget>,
        target: u64,
        seed_budget: u64,
        large: Option<(u64, usize, usize)>,
    ) -> Packing {
        // On a model's few hundred tensors a pass takes microseconds, less than starting a
        // thread: small problems run their passes on this one.
        let threads = if self.placer.problem.items.len() < THREADED_FROM {
            1
        } else {
            threads_for(self.threads)
        };
        let seed = best_of::seed(&mut self.placer, target, seed_budget, threads);
        self.stats.seed = Some(seed.origin);
        let placed = seed.packing.offsets.iter().map(Option::is_some).collect();
        self.known_bound = Some((placed, seed.placed_bound));
        let mut large = match large {
            Some((node_budget, max_items, peak_max_items))
                if seed.packing.height > seed.lower_bound =>
            {
                let problem = self.placer.problem;
                let start = seed.packing.clone();
                let limits = (node_budget, max_items);
                let (found, nodes) = large::lower(problem, start, seed.lower_bound, limits);
                self.stats.nodes += nodes;
                // The window around the op of most load, from the lower of the two.
                let (found, nodes) = if found.height > seed.lower_bound && peak_max_items > 0 {
                    let limits = (node_budget, peak_max_items);
                    large::peak_window(problem, found, seed.lower_bound, limits)
                } else {
                    (found, 0)
                };
                self.stats.nodes += nodes;
                Some(found).filter(|p| p.height < seed.packing.height)
            }
            _ => None,
        };
        if let Some(found) = large.take_if(|p| p.height <= seed.lower_bound) {
            return found;
        }
        let packing = match budget {
            Some(budget) => {
                let (packing, climb) = hill_climb::climb(&mut self.placer, seed, budget);
                self.stats.iterations = climb.iterations;
                self.stats.improvements = climb.improvements;
                packing
            }
            None => seed.packing,
        };
        match large {
            Some(found) if found.height < packing.height => found,
            _ => packing,
        }
    }

    /// The exact search from `packing` (see [`exact_stage`]).
    fn exact(&mut self, packing: Packing, opts: &OptimalOptions) -> Packing {
        let problem = self.placer.problem;
        let (packing, proven) = exact_stage(problem, packing, opts, &mut self.stats);
        self.proven = proven;
        packing
    }
}

fn run_hill_climb(kind: &PlannerKind, run: &mut Run<'_>) -> Packing {
    let o = match kind {
        PlannerKind::HillClimb(o) => o.clone(),
        _ => HillClimbOptions::default(),
    };
    run.search(Some(hill_climb::Budget {
        iterations: o.iterations,
        max_stall: o.max_stall_iterations,
        work: None,
        seed: o.seed,
        deadline: None,
    }))
}

fn run_optimal(kind: &PlannerKind, run: &mut Run<'_>) -> Packing {
    let o = match kind {
        PlannerKind::Optimal(o) => o.clone(),
        _ => OptimalOptions::default(),
    };
    // The better the incumbent, the less the exact search has to do: start from the
    // default hill climb.
    let packing = run_hill_climb(&PlannerKind::HillClimb(HillClimbOptions::default()), run);
    run.exact(packing, &o)
}

fn run_auto(kind: &PlannerKind, run: &mut Run<'_>) -> Packing {
    let o = match kind {
        PlannerKind::Auto(o) => o.clone(),
        _ => AutoOptions::default(),
    };
    let deadline = o.time_limit.map(|d| Instant::now() + d);
    run.threads = o.threads;
    let problem = run.placer.problem;
    if problem.items.len() >= o.split_min_items as usize
        && let Some(split) = split::Split::of(problem)
    {
        let packing = run_parts(problem, &split, &o, deadline, &mut run.stats);
        // Parts are planned without the capacity: when they do not fit under it together,
        // the whole problem gets its own try (the answer is then the same as without the
        // decomposition, only later).
        if problem.capacity.is_none_or(|c| packing.height <= c) {
            return packing;
        }
    }
    auto_stages(run, &o, (0, false), deadline)
}

/// The stages of `auto` after any decomposition, stopping at a height of `target` (or the
/// lower bound); `windows` when the problem is a decomposition's part, too large for the
/// exact search, so [`window::lower_peak`] searches windows around its peak instead.
fn auto_stages(
    run: &mut Run<'_>,
    o: &AutoOptions,
    (target, windows): (u64, bool),
    deadline: Option<Instant>,
) -> Packing {
    // Under a time limit the climb may take half of what is left when the exact search
    // follows, all of it otherwise.
    let n = run.placer.problem.items.len();
    let whole = n <= o.exact_max_items as usize;
    let exact = o.node_budget > 0 && (whole || (windows && n <= o.part_exact_max_items as usize));
    let climb_until = deadline.map(|d| {
        let now = Instant::now();
        let left = d.saturating_duration_since(now);
        now + if exact { left / 2 } else { left }
    });
    let timed = deadline.is_some();
    // Large items first (an exact search too) where the exact search or the windows run,
    // and under a time limit. Problems without time cuts above `exact_max_items` (the random
    // ones) skip it otherwise: there it lowered random 20k problems by 0.3-1.8 % but took
    // 1.2-1.5 s more, against their 2 s target.
    let large = o.node_budget > 0 && o.large_max_items > 0 && (whole || windows || timed);
    let packing = run.search_to(
        Some(hill_climb::Budget {
            iterations: if timed { u32::MAX } else { o.iterations },
            max_stall: if timed { None } else { o.max_stall_iterations },
            work: if timed { None } else { Some(o.budget) },
            seed: o.seed,
            deadline: climb_until,
        }),
        target,
        o.seed_budget,
        large.then_some((
            o.node_budget,
            o.large_max_items as usize,
            o.peak_max_items as usize,
        )),
    );
    let problem = run.placer.problem;
    let mut packing = packing;
    if exact && packing.height > target && !certify(problem, &packing).optimal {
        // A part that windows may follow keeps to the node budget under a time limit too.
        let opts = OptimalOptions {
            node_budget: if timed && whole {
                u64::MAX
            } else {
                o.node_budget
            },
            time_limit: deadline.map(|d| d.saturating_duration_since(Instant::now())),
        };
        packing = run.exact(packing, &opts);
    }
    if windows && !whole && o.node_budget > 0 && packing.height > target {
        // Too large to search whole, or searched whole in vain: search windows around the
        // peak. Only on the parts of a decomposition: on problems without time cuts (the
        // random ones) every buffer overlaps hundreds of others, a node costs ten times as
        // much and the windows were measured to gain nothing there.
        let floor = target.max(height_lower_bound(problem));
        let (found, nodes) = window::lower_peak(problem, packing, floor, o.node_budget);
        run.stats.nodes += nodes;
        packing = found;
    }
    packing
}

/// Plans the parts of `split` with `auto`'s stages, each stopping once it no longer
/// decides the height (at the whole problem's lower bound), on up to `o.threads` threads,
/// and puts them together.
fn run_parts(
    problem: &Problem,
    split: &split::Split,
    o: &AutoOptions,
    deadline: Option<Instant>,
    stats: &mut SearchStats,
) -> Packing {
    let bound = height_lower_bound(problem);
    let slack = (u128::from(bound) * u128::from(o.slack_ppm) / 1_000_000) as u64;
    let goal = bound.saturating_add(slack);
    let n = split.parts.len();
    let solve = |k: usize| {
        let sub = split.part_problem(problem, k);
        // The parts already share the threads: each part's passes run on its own.
        let mut run = Run {
            placer: Placer::new(&sub),
            stats: SearchStats::default(),
            proven: false,
            threads: 1,
            known_bound: None,
        };
        let target = goal.saturating_sub(split.parts[k].0);
        let packing = auto_stages(&mut run, o, (target, true), deadline);
        let mut stats = run.stats;
        stats.placements = run.placer.placements;
        stats.work = run.placer.work;
        (packing, stats)
    };
    // Largest parts first, for balance; which thread plans a part changes nothing.
    let mut queue: Vec<usize> = (0..n).collect();
    queue.sort_by_key(|&k| (std::cmp::Reverse(split.parts[k].1.len()), k));
    let results = crate::par::each(threads_for(o.threads), &queue, solve, |_, _| false);
    assemble(problem, split, results, stats)
}

/// The whole problem's packing from its parts' (a part that failed to plan, which a
/// panicking thread would leave, is planned again here).
fn assemble(
    problem: &Problem,
    split: &split::Split,
    results: Vec<Option<(Packing, SearchStats)>>,
    stats: &mut SearchStats,
) -> Packing {
    let mut offsets: Vec<Option<u64>> = vec![None; problem.items.len()];
    let mut height = 0u64;
    for &(i, off) in &split.stacked {
        offsets[i] = Some(off);
        height = height.max(off.saturating_add(problem.items[i].size));
    }
    let mut peak = (0u64, None);
    for (k, r) in results.into_iter().enumerate() {
        let (base, idx) = &split.parts[k];
        let (packing, s) = r.unwrap_or_else(|| {
            let sub = split.part_problem(problem, k);
            (
                pack(&PlannerKind::GreedyBySize, &sub),
                SearchStats::default(),
            )
        });
        for (&i, o) in idx.iter().zip(&packing.offsets) {
            offsets[i] = o.map(|o| o.saturating_add(*base));
        }
        let top = base.saturating_add(packing.height);
        height = height.max(top);
        if top > peak.0 || peak.1.is_none() {
            peak = (top, s.seed);
        }
        stats.iterations += s.iterations;
        stats.improvements += s.improvements;
        stats.placements += s.placements;
        stats.work += s.work;
        stats.nodes += s.nodes;
    }
    stats.seed = peak.1;
    stats.parts = u32::try_from(split.parts.len()).unwrap_or(u32::MAX);
    Packing { offsets, height }
}

/// The exact search over the items `packing` placed (the others stay spilled), from
/// `packing`: the lower of the two (`packing` on ties), and whether the search proved that
/// height optimal for these items.
fn exact_stage(
    problem: &Problem,
    packing: Packing,
    opts: &OptimalOptions,
    stats: &mut SearchStats,
) -> (Packing, bool) {
    let keep: Vec<usize> = (0..problem.items.len())
        .filter(|&i| packing.offsets[i].is_some())
        .collect();
    let sub = Problem {
        items: keep.iter().map(|&i| problem.items[i].clone()).collect(),
        capacity: None,
    };
    let hint = Packing {
        offsets: keep.iter().map(|&i| packing.offsets[i]).collect(),
        height: packing.height,
    };
    let (found, proven, search) = optimal::minimize_with_stats(&sub, opts, Some(hint));
    stats.nodes += search.nodes;
    if found.height >= packing.height || found.offsets.len() != keep.len() {
        let proven = proven && found.height == packing.height;
        return (packing, proven);
    }
    let mut offsets = vec![None; problem.items.len()];
    for (&i, &o) in keep.iter().zip(&found.offsets) {
        offsets[i] = o;
    }
    // The exact search knows no capacity: a spillable item it put above it would break
    // the spill rule, so such a packing is not taken.
    let passes_capacity = problem.capacity.is_some_and(|c| {
        keep.iter().any(|&i| {
            let it = &problem.items[i];
            it.spillable && offsets[i].is_none_or(|o| o.saturating_add(it.size) > c)
        })
    });
    if passes_capacity
        || offsets
            .iter()
            .zip(&packing.offsets)
            .any(|(a, b)| a.is_some() != b.is_some())
    {
        return (packing, false);
    }
    (
        Packing {
            offsets,
            height: found.height,
        },
        proven,
    )
}

/// Places items one by one: fixed items at their offsets, then unspillable items in `order`,
/// then spillable ones in `order`, each at the lowest aligned offset where it overlaps no
/// time-overlapping item placed so far. A spillable item whose end would pass the capacity
/// is spilled; an item in neither `order` nor fixed is left out.
pub fn place_in_order(problem: &Problem, order: &[usize]) -> Packing {
    place_in_order_by(problem, order, GapRule::Lowest)
}

/// [`place_in_order`] with a choice of gap rule.
pub fn place_in_order_by(problem: &Problem, order: &[usize], rule: GapRule) -> Packing {
    Placer::new(problem).place_with_spill(order, rule)
}

/// The largest sum of sizes, each rounded up to its alignment, live at one op (`LB16` when
/// every alignment is 16): a figure for benchmarks and for comparing with other planners'
/// reports, not a lower bound.
///
/// A packing can beat it, because the highest item needs no padding after it: two 10-byte
/// items aligned to 16 fit in 26 bytes, not 32. [`height_lower_bound`] is the bound that no
/// packing beats, the one reports print; the two are equal when every size is a multiple of
/// its alignment.
pub fn aligned_live_sum(problem: &Problem) -> u64 {
    let mut events: Vec<(u32, i128)> = Vec::with_capacity(problem.items.len() * 2);
    for it in &problem.items {
        if it.start > it.end {
            continue;
        }
        let size = align_up(it.size, it.align).unwrap_or(u64::MAX);
        events.push((it.start, i128::from(size)));
        if let Some(after) = it.end.checked_add(1) {
            events.push((after, -i128::from(size)));
        }
    }
    events.sort_unstable();
    let mut cur = 0i128;
    let mut best = 0i128;
    for (_, d) in events {
        cur += d;
        best = best.max(cur);
    }
    u64::try_from(best).unwrap_or(u64::MAX)
}

/// A lower bound on the height of any packing of `problem`'s items: no packing is lower.
///
/// At every op, the items live there sit in disjoint byte ranges. Of those whose alignment
/// is at least `a`, each starts at a multiple of `a`, so each but the highest takes its size
/// rounded up to `a`; the bound is the largest, over ops and over the alignments present, of
/// the sum of the sizes so rounded less the largest rounding of one item. With `a = 1` that
/// is the plain sum of the sizes live at one op; when every size is a multiple of its
/// alignment it equals [`aligned_live_sum`]. The highest end of a fixed item is a bound too.
pub fn height_lower_bound(problem: &Problem) -> u64 {
    lower_bound_of(problem, None)
}

/// [`height_lower_bound`] of the items `included` marks (all when `None`).
pub(crate) fn lower_bound_of(problem: &Problem, included: Option<&[bool]>) -> u64 {
    let items = &problem.items;
    let counted = |i: usize| included.is_none_or(|m| m.get(i).copied().unwrap_or(false));
    let mut best = items
        .iter()
        .enumerate()
        .filter(|&(i, _)| counted(i))
        .filter_map(|(_, it)| it.fixed.map(|o| o.saturating_add(it.size)))
        .max()
        .unwrap_or(0);
    let live: Vec<usize> = (0..items.len())
        .filter(|&i| counted(i) && items[i].size > 0 && items[i].start <= items[i].end)
        .collect();
    let mut classes: Vec<u64> = live.iter().map(|&i| items[i].align.max(1)).collect();
    classes.push(1);
    classes.sort_unstable();
    classes.dedup();
    // Per class: sum of rounded sizes live now, and how many live items have each rounding.
    let mut sums = vec![0u128; classes.len()];
    let mut pads: Vec<BTreeMap<u64, u32>> = vec![BTreeMap::new(); classes.len()];
    // (time, is_start, item): at one time, ends (the op after the last) before starts.
    let mut events: Vec<(u32, bool, usize)> = Vec::with_capacity(live.len() * 2);
    for &i in &live {
        events.push((items[i].start, true, i));
        if let Some(after) = items[i].end.checked_add(1) {
            events.push((after, false, i));
        }
    }
    events.sort_unstable();
    let mut k = 0;
    while k < events.len() {
        let time = events[k].0;
        while k < events.len() && events[k].0 == time {
            let (_, add, i) = events[k];
            let it = &items[i];
            for (c, &a) in classes.iter().enumerate() {
                if a > it.align.max(1) {
                    break;
                }
                let rounded = align_up(it.size, a).unwrap_or(u64::MAX);
                let pad = rounded - it.size;
                if add {
                    sums[c] += u128::from(rounded);
                    *pads[c].entry(pad).or_insert(0) += 1;
                } else {
                    sums[c] -= u128::from(rounded);
                    if let Some(n) = pads[c].get_mut(&pad) {
                        *n -= 1;
                        if *n == 0 {
                            pads[c].remove(&pad);
                        }
                    }
                }
            }
            k += 1;
        }
        for c in 0..classes.len() {
            if let Some((&pad, _)) = pads[c].last_key_value() {
                let v = sums[c] - u128::from(pad);
                best = best.max(u64::try_from(v).unwrap_or(u64::MAX));
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(size: u64, start: u32, end: u32) -> Item {
        Item::new(size, start, end)
    }

    #[test]
    fn reuses_dead_slots() {
        let p = Problem {
            items: vec![item(10, 0, 1), item(10, 1, 2), item(10, 2, 3)],
            capacity: None,
        };
        let k = pack(&PlannerKind::Greedy, &p);
        assert_eq!(k.offsets, vec![Some(0), Some(10), Some(0)]);
        assert_eq!(k.height, 20);
        assert_eq!(aligned_live_sum(&p), 20);
    }

    #[test]
    fn spills_only_spillable_items() {
        let mut a = item(64, 0, 0);
        a.spillable = true;
        let b = a.clone();
        let pinned = item(64, 0, 0);
        let p = Problem {
            items: vec![a, b, pinned],
            capacity: Some(128),
        };
        let k = pack(&PlannerKind::GreedyBySize, &p);
        assert_eq!(k.offsets[2], Some(0));
        assert_eq!(k.offsets.iter().filter(|o| o.is_none()).count(), 1);
        assert_eq!(k.height, 128);
    }

    #[test]
    fn options_are_checked() {
        let mut o = BTreeMap::new();
        o.insert("iterations".to_string(), OptionValue::Int(10));
        assert!(PlannerKind::from_name("greedy", &o).is_err());
        let k = PlannerKind::from_name("hill_climb", &o).unwrap();
        assert_eq!(
            k,
            PlannerKind::HillClimb(HillClimbOptions {
                iterations: 10,
                ..Default::default()
            })
        );
        o.insert("iteratons".to_string(), OptionValue::Int(10));
        let e = PlannerKind::from_name("hill_climb", &o).unwrap_err();
        assert!(
            e.message.contains("did you mean `iterations`"),
            "{}",
            e.message
        );
        let e = PlannerKind::from_name("gredy", &BTreeMap::new()).unwrap_err();
        assert!(e.message.contains("did you mean `greedy`"), "{}", e.message);
    }
}
