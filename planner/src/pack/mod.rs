//! Packing: offsets within one arena.
//!
//! Packers see an abstract [`Problem`]: items with a size, an inclusive op interval, an
//! alignment, optionally a fixed offset, and whether they may spill to the next memory when
//! the arena's capacity is reached. They know nothing about tensors or manifests, so the same
//! code plans real models and MiniMalloc CSV instances.
//!
//! Every packer is deterministic: the same problem gives the same offsets on every machine.

use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::plan::align_up;

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
    /// Problem and fix.
    pub message: String,
}

/// Which packer to run, with its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannerKind {
    /// First fit in lifetime-start order, lowest aligned offset.
    Greedy,
    /// Largest first (then start, then id), lowest aligned gap among time-overlapping items.
    GreedyBySize,
    /// Seeded local search over placement orders, starting from `greedy_by_size`.
    HillClimb(HillClimbOptions),
}

impl PlannerKind {
    /// Every planner name, for help texts and did-you-mean.
    pub const NAMES: &'static [&'static str] = &["greedy", "greedy_by_size", "hill_climb"];

    /// The planner's manifest name.
    pub fn name(&self) -> &'static str {
        match self {
            PlannerKind::Greedy => "greedy",
            PlannerKind::GreedyBySize => "greedy_by_size",
            PlannerKind::HillClimb(_) => "hill_climb",
        }
    }

    /// Builds a planner from its name and options; options a planner does not take are
    /// an error that says so.
    pub fn from_name(
        name: &str,
        options: &BTreeMap<String, OptionValue>,
    ) -> Result<PlannerKind, OptionError> {
        let no_options = |kind: PlannerKind| {
            if let Some(key) = options.keys().next() {
                Err(OptionError {
                    key: Some(key.clone()),
                    message: format!(
                        "planner `{name}` takes no options, but `{key}` is given; remove memory.planner_options or pick `hill_climb`"
                    ),
                })
            } else {
                Ok(kind)
            }
        };
        match name {
            "greedy" => no_options(PlannerKind::Greedy),
            "greedy_by_size" => no_options(PlannerKind::GreedyBySize),
            "hill_climb" => {
                let mut o = HillClimbOptions::default();
                for (key, value) in options {
                    match key.as_str() {
                        "iterations" => o.iterations = int_option(key, value, 0)?,
                        "seed" => {
                            o.seed = match value {
                                OptionValue::Int(v) if *v >= 0 => *v as u64,
                                _ => return Err(bad_value(key, value, "a whole number >= 0")),
                            }
                        }
                        "max_stall_iterations" => {
                            o.max_stall_iterations = match value {
                                OptionValue::Str(s) if s == "none" => None,
                                _ => Some(int_option(key, value, 1)?),
                            }
                        }
                        _ => {
                            let hint = crate::error::did_you_mean(
                                key,
                                ["iterations", "seed", "max_stall_iterations"],
                            )
                            .map(|s| format!(" (did you mean `{s}`?)"))
                            .unwrap_or_default();
                            return Err(OptionError {
                                key: Some(key.clone()),
                                message: format!(
                                    "planner `hill_climb` has no option `{key}`{hint}; it takes `iterations`, `seed` and `max_stall_iterations`"
                                ),
                            });
                        }
                    }
                }
                Ok(PlannerKind::HillClimb(o))
            }
            _ => {
                let hint = crate::error::did_you_mean(name, PlannerKind::NAMES.iter().copied())
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                Err(OptionError {
                    key: None,
                    message: format!(
                        "unknown planner `{name}`{hint}; choose one of {}",
                        PlannerKind::NAMES.join(", ")
                    ),
                })
            }
        }
    }
}

fn bad_value(key: &str, value: &OptionValue, want: &str) -> OptionError {
    OptionError {
        key: Some(key.to_string()),
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

/// Packs `problem` with the chosen planner.
pub fn pack(kind: &PlannerKind, problem: &Problem) -> Packing {
    match kind {
        PlannerKind::Greedy => place_in_order(problem, &greedy_order(problem)),
        PlannerKind::GreedyBySize => place_in_order(problem, &size_order(problem)),
        // Placeholder until the hill climb lands: its contract is "never worse than
        // greedy_by_size", which this meets trivially.
        PlannerKind::HillClimb(_) => place_in_order(problem, &size_order(problem)),
    }
}

/// Item indices in lifetime-start order (then larger first, then index).
pub fn greedy_order(problem: &Problem) -> Vec<usize> {
    let mut order: Vec<usize> = (0..problem.items.len()).collect();
    order.sort_by_key(|&i| {
        let it = &problem.items[i];
        (it.start, std::cmp::Reverse(it.size), i)
    });
    order
}

/// Item indices largest first, then earliest start, then index.
pub fn size_order(problem: &Problem) -> Vec<usize> {
    let mut order: Vec<usize> = (0..problem.items.len()).collect();
    order.sort_by_key(|&i| {
        let it = &problem.items[i];
        (std::cmp::Reverse(it.size), it.start, i)
    });
    order
}

/// Places items one by one: fixed items at their offsets, then unspillable items in `order`,
/// then spillable ones in `order`, each at the lowest aligned offset where it overlaps no
/// time-overlapping item placed so far. A spillable item whose end would pass the capacity
/// is spilled.
pub fn place_in_order(problem: &Problem, order: &[usize]) -> Packing {
    let items = &problem.items;
    let mut offsets: Vec<Option<u64>> = vec![None; items.len()];
    let mut placed: Vec<usize> = Vec::with_capacity(items.len());
    let mut height = 0u64;
    for (i, it) in items.iter().enumerate() {
        if let Some(off) = it.fixed {
            offsets[i] = Some(off);
            placed.push(i);
            height = height.max(off.saturating_add(it.size));
        }
    }
    let rest = order
        .iter()
        .copied()
        .filter(|&i| items[i].fixed.is_none() && !items[i].spillable)
        .chain(
            order
                .iter()
                .copied()
                .filter(|&i| items[i].fixed.is_none() && items[i].spillable),
        );
    let mut busy: Vec<(u64, u64)> = Vec::new();
    for i in rest {
        let it = &items[i];
        busy.clear();
        busy.extend(placed.iter().filter_map(|&j| {
            let other = &items[j];
            (other.size > 0 && it.overlaps_in_time(other))
                .then(|| offsets[j].map(|o| (o, o.saturating_add(other.size))))
                .flatten()
        }));
        busy.sort_unstable();
        let off = lowest_fit(&busy, it.size, it.align);
        let end = off.saturating_add(it.size);
        if it.spillable && problem.capacity.is_some_and(|c| end > c) {
            continue;
        }
        offsets[i] = Some(off);
        placed.push(i);
        height = height.max(end);
    }
    Packing { offsets, height }
}

/// Lowest offset aligned to `align` where `size` bytes fit between the sorted busy ranges.
fn lowest_fit(busy: &[(u64, u64)], size: u64, align: u64) -> u64 {
    let mut candidate = 0u64;
    for &(lo, hi) in busy {
        if candidate.saturating_add(size) <= lo {
            return candidate;
        }
        if hi > candidate {
            candidate = align_up(hi, align).unwrap_or(u64::MAX);
        }
    }
    candidate
}

/// The largest sum of sizes (each rounded up to its alignment) live at one op: no packing
/// of these items can be lower.
pub fn lower_bound(problem: &Problem) -> u64 {
    let mut events: Vec<(u32, i128)> = Vec::with_capacity(problem.items.len() * 2);
    for it in &problem.items {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn item(size: u64, start: u32, end: u32) -> Item {
        Item {
            size,
            start,
            end,
            align: 1,
            fixed: None,
            spillable: false,
        }
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
        assert_eq!(lower_bound(&p), 20);
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
