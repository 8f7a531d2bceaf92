//! The packers by name: the [`PACKERS`] table that the manifest, the CLI and the docs read,
//! the options each one takes, and the entry points that run the one a [`PlannerKind`]
//! names.

use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::time::Duration;
use std::vec::Vec;

use super::auto::{Report, Run, run_auto, run_hill_climb, run_optimal};
use super::kind::PlannerKind;
use super::gaps::GapRule;
use super::greedy::{greedy_order, size_order};
use super::optimal::OptimalOptions;
use super::options::{AutoOptions, HillClimbOptions, OptionError, OptionErrorKind, OptionValue};
use super::problem::{Packing, Problem};
use super::tflm;

/// Packs `problem` with the chosen planner.
pub fn pack(kind: &PlannerKind, problem: &Problem) -> Packing {
    pack_report(kind, problem).packing
}

/// Packs `problem` with the chosen planner and reports on the result.
pub fn pack_report(kind: &PlannerKind, problem: &Problem) -> Report {
    let mut run = Run::new(problem);
    let packing = (kind.packer().run)(kind, &mut run);
    run.report(problem, packing)
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
    Packer::plain("tflm", || PlannerKind::Tflm, |_, r| tflm::pack_over(&r.placer)),
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

/// Sets `$key` of `$o`, the options of a packer that climbs (`hill_climb`, `auto`): the four
/// keys of the climb, then the packer's own match arms `$own`; false when it has no such
/// option.
macro_rules! set_climbing {
    ($o:ident, $key:ident, $v:ident; $($own:tt)*) => {{
        match $key {
            "iterations" => $o.iterations = int_option($key, $v, 0)?,
            "seed" => $o.seed = seed_option($key, $v)?,
            "max_stall_iterations" => $o.max_stall_iterations = stall_option($key, $v)?,
            "budget" => $o.budget = seed_option($key, $v)?,
            $($own)*
            _ => return Ok(false),
        }
        Ok(true)
    }};
}

/// Sets `key` of `o`; false when it has no such option.
fn set_hill_climb(o: &mut HillClimbOptions, key: &str, v: &OptionValue) -> Result<bool, OptionError> {
    set_climbing!(o, key, v;)
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
    set_climbing! { o, key, v;
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
    }
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
