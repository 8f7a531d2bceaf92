//! The packers by name: [`PlannerKind`], the [`PACKERS`] table that the manifest, the
//! CLI and the docs read, and the options each one takes.

use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::time::Duration;
use std::vec::Vec;

use super::auto::{Run, run_auto, run_hill_climb, run_optimal};
use super::greedy::{GapRule, greedy_order, size_order};
use super::optimal::OptimalOptions;
use super::options::{AutoOptions, HillClimbOptions, OptionError, OptionErrorKind, OptionValue};
use super::problem::Packing;
use super::tflm;

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
///    items, the exact search ([`optimal::minimize`](super::optimal::minimize)) over the same items, from that
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
    pub(super) run: fn(&PlannerKind, &mut Run<'_>) -> Packing,
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
    Packer::plain("greedy", || PlannerKind::Greedy, |_, r| greedy(r, greedy_order)),
    Packer::plain("greedy_by_size", || PlannerKind::GreedyBySize, |_, r| greedy(r, size_order)),
    Packer::plain("best_of_greedy", || PlannerKind::BestOfGreedy, |_, r| r.search(None)),
    Packer::plain("tflm", || PlannerKind::Tflm, |_, r| tflm::pack(r.placer.problem)),
    Packer {
        name: "hill_climb",
        keys: &["iterations", "seed", "max_stall_iterations", "budget"],
        default: || PlannerKind::HillClimb(HillClimbOptions::default()),
        set: set_option,
        run: run_hill_climb,
    },
    Packer {
        name: "optimal",
        keys: &["node_budget", "time_limit_ms"],
        default: || PlannerKind::Optimal(OptimalOptions::default()),
        set: set_option,
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
        set: set_option,
        run: run_auto,
    },
];

impl Packer {
    /// A packer that takes no options.
    const fn plain(
        name: &'static str,
        default: fn() -> PlannerKind,
        run: fn(&PlannerKind, &mut Run<'_>) -> Packing,
    ) -> Packer {
        Packer {
            name,
            keys: &[],
            default,
            set: set_option,
            run,
        }
    }
}

/// One greedy pass in the order `order` gives, lowest offset first.
fn greedy(run: &mut Run<'_>, order: fn(&super::Problem) -> Vec<usize>) -> Packing {
    let order = order(run.placer.problem);
    run.placer.place_with_spill(&order, GapRule::Lowest)
}

/// The `name` of each row of the `const` table `$table`, as an array made when the crate
/// compiles: for the planner and platform preset lists (a `const fn` cannot read one field
/// of rows of any type).
macro_rules! names_of {
    ($table:expr) => {{
        let mut names = [""; $table.len()];
        let mut i = 0;
        while i < $table.len() {
            names[i] = $table[i].name;
            i += 1;
        }
        names
    }};
}
pub(crate) use names_of;

const NAME_LIST: [&str; PACKERS.len()] = names_of!(PACKERS);

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

/// Sets option `key` of a planner to `v`; a key the planner does not take is an error.
fn set_option(kind: &mut PlannerKind, key: &str, v: &OptionValue) -> Result<(), OptionError> {
    let known = match kind {
        PlannerKind::HillClimb(o) => set_hill_climb(o, key, v)?,
        PlannerKind::Optimal(o) => set_optimal(o, key, v)?,
        PlannerKind::Auto(o) => set_auto(o, key, v)?,
        _ => false,
    };
    if known {
        return Ok(());
    }
    Err(unknown_option(kind.name(), key, kind.packer().keys))
}

/// Sets `key` of `o`; false when it has no such option.
fn set_hill_climb(o: &mut HillClimbOptions, key: &str, v: &OptionValue) -> Result<bool, OptionError> {
    match key {
        "iterations" => o.iterations = int_option(key, v, 0)?,
        "seed" => o.seed = seed_option(key, v)?,
        "max_stall_iterations" => o.max_stall_iterations = stall_option(key, v)?,
        "budget" => o.budget = seed_option(key, v)?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// Sets `key` of `o`; false when it has no such option.
fn set_optimal(o: &mut OptimalOptions, key: &str, v: &OptionValue) -> Result<bool, OptionError> {
    match key {
        "node_budget" => o.node_budget = seed_option(key, v)?,
        "time_limit_ms" => o.time_limit = Some(Duration::from_millis(seed_option(key, v)?)),
        _ => return Ok(false),
    }
    Ok(true)
}

/// Sets `key` of `o`; false when it has no such option.
fn set_auto(o: &mut AutoOptions, key: &str, v: &OptionValue) -> Result<bool, OptionError> {
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
        _ => return Ok(false),
    }
    Ok(true)
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
