//! Stage 5: scratch. Pinned tensors are packed first in their banks; the rest fill the banks
//! in preference order, and a tensor that does not fit spills to the next bank.

use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::vec::Vec;

use super::inputs::{Budget, Inputs, Placed, Places};
use super::{ArenaReport, internal};
use crate::error::{Error, Result};
use crate::graph::TensorIndex;
use crate::pack::{self, Item, Packing, Problem};
use crate::placement::{Decision, Home, Reason, SpillNote};
use crate::plan::{ArenaRole, ArenaUsage, MAX_ARENA};

/// The scratch banks to fill, and who goes where.
struct Banks {
    /// Preference order (`memory.constraints`, or every writable memory).
    preferred: Vec<String>,
    /// The preferred banks, then any bank only pinned tensors use.
    all: Vec<String>,
    /// Pinned tensors per bank.
    pinned: BTreeMap<String, Vec<usize>>,
}

/// What the scratch stage returns.
pub(super) struct Scratch {
    /// The scratch arenas, by memory.
    pub(super) arenas: BTreeMap<String, ArenaUsage>,
    /// Their figures, in bank order.
    pub(super) reports: Vec<ArenaReport>,
    /// The slot roots it placed.
    pub(super) placed: Placed,
    /// Warnings for the user.
    pub(super) warnings: Vec<String>,
}

/// Stage 5: fills the scratch banks with what `budget` has left; errors when a bank
/// overflows with pinned tensors or when a tensor fits no bank.
pub(super) fn fill(inp: &Inputs<'_>, mut budget: Budget) -> Result<Scratch> {
    let preferred = inp.bank_names();
    let mut banks = Banks {
        all: preferred.clone(),
        preferred,
        pinned: BTreeMap::new(),
    };
    let mut carry: Vec<usize> = Vec::new();
    for (i, r) in inp.roots_of(ArenaRole::Scratch) {
        match &r.home {
            Home::Memory { memory, .. } => {
                if !banks.all.contains(memory) {
                    banks.all.push(memory.clone());
                }
                banks.pinned.entry(memory.clone()).or_default().push(i);
            }
            Home::FirstBankWithRoom => carry.push(i),
        }
    }
    let mut out = Scratch {
        arenas: BTreeMap::new(),
        reports: Vec::new(),
        placed: Vec::new(),
        warnings: Vec::new(),
    };
    let mut spills: BTreeMap<usize, Vec<SpillNote>> = BTreeMap::new();
    for bi in 0..banks.all.len() {
        let bank = Bank {
            banks: &banks,
            bi,
            charged: &budget.charged,
        };
        let capacity = budget.left.get(&banks.all[bi]).copied().flatten();
        let packed = fill_bank(inp, &bank, capacity, carry, &mut spills)?;
        carry = packed.carry;
        let Some((mut arena, report)) = packed.arena else {
            continue;
        };
        arena.total_size = budget.share(&arena.memory, arena.used);
        out.arenas.insert(arena.memory.clone(), arena);
        out.reports.push(report);
        out.placed.extend(packed.placed);
    }
    if let Some(&i) = carry.first() {
        return Err(no_room(inp, i, spills.get(&i).map_or(&[], |v| v)));
    }
    let spilled = out
        .placed
        .iter()
        .filter(|(_, d, _)| matches!(d.reason, Reason::Spilled { .. }))
        .count();
    if spilled > 0 {
        out.warnings.push(format!(
            "{spilled} scratch tensors spilled past their preferred bank (see `planner explain`)"
        ));
    }
    Ok(out)
}

/// The bank `fill_bank` packs: the banks, its index, and what constants and state charged.
struct Bank<'b> {
    banks: &'b Banks,
    bi: usize,
    charged: &'b BTreeMap<String, u64>,
}

/// What one bank's packing returns.
struct Packed {
    /// The bank's arena (its `total_size` still to share) and figures, when anything went
    /// there.
    arena: Option<(ArenaUsage, ArenaReport)>,
    /// The roots placed there.
    placed: Placed,
    /// What did not fit, for the next bank.
    carry: Vec<usize>,
}

/// Packs bank `bank.bi` (its budget left: `capacity`): its pinned tensors and, for a
/// preferred bank, everything carried from the banks before it.
fn fill_bank(
    inp: &Inputs<'_>,
    bank: &Bank<'_>,
    capacity: Option<u64>,
    mut carry: Vec<usize>,
    spills: &mut BTreeMap<usize, Vec<SpillNote>>,
) -> Result<Packed> {
    let (banks, bi) = (bank.banks, bank.bi);
    let name = &banks.all[bi];
    let in_preference = bi < banks.preferred.len();
    let pins: &[usize] = banks.pinned.get(name).map_or(&[], |v| v);
    let movers: Vec<usize> = if in_preference {
        std::mem::take(&mut carry)
    } else {
        Vec::new()
    };
    let mut out = Packed {
        arena: None,
        placed: Vec::new(),
        carry: Vec::new(),
    };
    if pins.is_empty() && movers.is_empty() {
        out.carry = carry;
        return Ok(out);
    }
    let members: Vec<usize> = pins.iter().chain(&movers).copied().collect();
    // The packers work below the largest arena even in an unlimited memory, so no height
    // or offset they compute can overflow.
    let limit = capacity.map_or(MAX_ARENA, |c| c.min(MAX_ARENA));
    let last_bank = bi + 1 == banks.preferred.len() || !in_preference;
    let problem = bank_problem(inp, name, &members, pins.len(), Some(limit), last_bank);
    let report = pack::pack_report(&inp.manifest.planner, &problem);
    let packing = report.packing;
    let mut placed = Vec::new();
    for (k, (&i, off)) in members.iter().zip(&packing.offsets).enumerate() {
        match off {
            Some(o) => {
                placed.push(k);
                if let Some(d) = decide(inp, i, name, spills.remove(&i)) {
                    out.placed.push((i, d, *o));
                }
            }
            None => {
                let (op, left) = fullest_op(&problem, &packing.offsets, k, limit);
                spills.entry(i).or_default().push(SpillNote {
                    bank: name.clone(),
                    op,
                    needs: padded(&problem.items[k]),
                    left,
                });
                carry.push(i);
            }
        }
    }
    if packing.height > limit {
        let full = Full {
            members: &members,
            pins: pins.len(),
            problem: &problem,
            packing: &packing,
            cap: limit,
        };
        return Err(bank_full(inp, bank, &full));
    }
    // The bound of the placed items, the one the certificate's `optimal` rests on.
    let lower_bound = report.certificate.lower_bound;
    let used = packing.height;
    let align = placed
        .iter()
        .map(|&k| problem.items[k].align)
        .max()
        .unwrap_or(1);
    let base = inp.arena_base_align(name, align);
    let mut arena = ArenaUsage::new(name.clone(), ArenaRole::Scratch, name.clone(), 0, base);
    arena.used = used;
    let figures = ArenaReport {
        memory: name.clone(),
        used,
        budget: capacity,
        lower_bound,
        fragmentation: used.saturating_sub(lower_bound),
        // The height reaches the lower bound, or the exact search proved it.
        optimal: report.certificate.optimal,
    };
    out.arena = Some((arena, figures));
    out.carry = carry;
    Ok(out)
}

/// Puts the two slots of each split in-place pair ([`crate::lifetimes::Lifetimes::split`])
/// at one offset: the output's slot moves to the input's offset, or the input's to the
/// output's, where that range is free over the moved slot's ops and inside the arena's
/// height. Returns the pairs neither move works for.
pub(super) fn join_split(
    inp: &Inputs<'_>,
    reports: &[ArenaReport],
    mut places: Places,
) -> std::result::Result<Places, Vec<Unjoined>> {
    let mut failed = Vec::new();
    for &(input, output) in &inp.lifetimes.split {
        let (ri, ro) = (
            inp.lifetimes.slot_of[input.get()].get(),
            inp.lifetimes.slot_of[output.get()].get(),
        );
        let unjoined = |input_offset| Unjoined {
            output,
            input_slot: TensorIndex(ri as u32),
            output_slot: TensorIndex(ro as u32),
            input_offset,
        };
        let (Some(di), Some(d_o)) = (&places.decided[ri], &places.decided[ro]) else {
            failed.push(unjoined(None));
            continue;
        };
        let (Some(oi), Some(oo)) = (places.offsets[ri], places.offsets[ro]) else {
            failed.push(unjoined(None));
            continue;
        };
        if di.memory != d_o.memory
            || di.role != ArenaRole::Scratch
            || d_o.role != ArenaRole::Scratch
        {
            failed.push(unjoined(None));
            continue;
        }
        if oi == oo {
            continue;
        }
        let bank = Slots {
            inp,
            places: &places,
            height: reports
                .iter()
                .find(|a| a.memory == di.memory)
                .map_or(0, |a| a.used),
            memory: &di.memory,
        };
        if bank.free_at(ro, oi) {
            places.offsets[ro] = Some(oi);
        } else if bank.free_at(ri, oo) {
            places.offsets[ri] = Some(oo);
        } else {
            failed.push(unjoined(Some(oi)));
        }
    }
    if failed.is_empty() {
        Ok(places)
    } else {
        Err(failed)
    }
}

/// A split in-place pair whose slots ended at two offsets.
pub(super) struct Unjoined {
    /// The pair's output.
    pub(super) output: TensorIndex,
    /// The input's slot root.
    pub(super) input_slot: TensorIndex,
    /// The output's slot root.
    pub(super) output_slot: TensorIndex,
    /// Where the input's slot went, when it was placed in scratch.
    pub(super) input_offset: Option<u64>,
}

/// The scratch slots of one bank, as placed so far.
struct Slots<'s, 'a> {
    inp: &'s Inputs<'a>,
    places: &'s Places,
    /// The bank's arena height.
    height: u64,
    memory: &'s str,
}

impl Slots<'_, '_> {
    /// True when slot root `r` can move to `offset` of the bank: aligned, inside the
    /// arena's height, and clear of every other slot live at one of its ops.
    fn free_at(&self, r: usize, offset: u64) -> bool {
        let (inp, places, memory) = (self.inp, self.places, self.memory);
        let size = inp.slot_size[r];
        let Some((a, b)) = inp.lifetimes.live[r] else {
            return false;
        };
        if !offset.is_multiple_of(inp.slot_align(r, memory))
            || offset.saturating_add(size) > self.height
        {
            return false;
        }
        inp.roots.iter().all(|&j| {
            if j == r || inp.slot_size[j] == 0 {
                return true;
            }
            let (Some(d), Some(o), Some((s, e))) =
                (&places.decided[j], places.offsets[j], inp.lifetimes.live[j])
            else {
                return true;
            };
            d.role != ArenaRole::Scratch
                || d.memory != memory
                || e < a
                || b < s
                || o.saturating_add(inp.slot_size[j]) <= offset
                || offset.saturating_add(size) <= o
        })
    }
}

/// The packing problem of one bank: pinned members first (never spilled), then movers,
/// which may spill unless this is the last bank they can go to.
fn bank_problem(
    inp: &Inputs<'_>,
    bank: &str,
    members: &[usize],
    pins: usize,
    capacity: Option<u64>,
    last_bank: bool,
) -> Problem {
    let last = inp.last_op();
    Problem {
        items: members
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let (start, end) = inp.lifetimes.live[i].unwrap_or((0, last));
                Item {
                    size: inp.slot_size[i],
                    start,
                    end,
                    align: inp.slot_align(i, bank),
                    fixed: inp.fixed.get(&TensorIndex(i as u32)).copied(),
                    spillable: k >= pins && !last_bank,
                }
            })
            .collect(),
        capacity,
    }
}

/// Where scratch tensor `i` went in `bank`: pinned ones keep their reason, movers say
/// whether they spilled.
fn decide(inp: &Inputs<'_>, i: usize, bank: &str, notes: Option<Vec<SpillNote>>) -> Option<Decision> {
    let r = inp.requests[i].as_ref()?;
    let reason = match &r.home {
        Home::Memory { reason, .. } => reason.clone(),
        Home::FirstBankWithRoom => match notes {
            Some(notes) if !notes.is_empty() => Reason::Spilled { notes },
            _ => Reason::FirstBank {
                role: ArenaRole::Scratch,
                bank: bank.into(),
            },
        },
    };
    Some(Decision {
        role: r.role,
        memory: bank.into(),
        source_memory: bank.into(),
        rule: r.rule,
        reason,
    })
}

/// A bank's packing that passes its capacity `cap`: its members (the first `pins` of them
/// pinned), their problem and packing.
struct Full<'f> {
    members: &'f [usize],
    pins: usize,
    problem: &'f Problem,
    packing: &'f Packing,
    cap: u64,
}

/// A bank whose unspillable tensors pass its capacity: names the highest one.
fn bank_full(inp: &Inputs<'_>, bank: &Bank<'_>, full: &Full<'_>) -> Error {
    let Full {
        members,
        pins,
        problem,
        packing,
        cap,
    } = *full;
    let name = bank.banks.all[bank.bi].as_str();
    let Some(k) = (0..members.len())
        .filter_map(|k| packing.offsets[k].map(|o| (k, o)))
        .max_by_key(|&(k, o)| {
            (
                o.saturating_add(problem.items[k].size),
                std::cmp::Reverse(k),
            )
        })
        .map(|(k, _)| k)
    else {
        return internal("height without items");
    };
    let i = members[k];
    let (op, left) = fullest_op(problem, &packing.offsets, k, cap);
    let fix = if cap == MAX_ARENA {
        format!(
            "an arena holds at most {MAX_ARENA} bytes (the largest object of a 32-bit target); move tensors to another bank with memory.tensors rules"
        )
    } else if k < pins {
        let next = bank.banks.preferred.iter().find(|b| *b != name);
        format!(
            "raise the max_size of {name}{}",
            next.map(|n| format!(" or let it spill to {n} (unpin it)"))
                .unwrap_or_default()
        )
    } else {
        format!("raise the max_size of {name}, or add a bank to memory.constraints")
    };
    let t = &inp.graph.tensors[i];
    let it = &problem.items[k];
    // What the bank would need: the bound of every tensor that cannot leave it.
    let stays: Vec<bool> = (0..members.len())
        .map(|k| k < pins || !problem.items[k].spillable)
        .collect();
    let need = pack::lower_bound_of(problem, Some(&stays));
    let count = stays.iter().filter(|&&s| s).count();
    let e = Error::infeasible(format!(
        "memory {name} is full: tensor {} ({}) needs {} bytes{} at op {op}, {left} left; the {count} scratch tensors that must stay in {name} need at least {need} bytes, and {name} has {cap} for scratch{}; {fix}",
        t.id,
        t.name,
        it.size,
        padding_note(inp, name, it),
        charged_note(inp, bank.charged, name),
    ));
    inp.at_budget(e, name)
}

/// `(its budget of B less U of constants and state)` when other arenas took part of the
/// bank's budget before scratch.
fn charged_note(inp: &Inputs<'_>, charged: &BTreeMap<String, u64>, bank: &str) -> String {
    match (inp.manifest.budget(bank), charged.get(bank)) {
        (Some(budget), Some(&used)) if used > 0 => {
            format!(" (its budget of {budget} less {used} of constants and state)")
        }
        _ => String::new(),
    }
}

/// Bytes an item takes with the padding its alignment can cost: its size rounded up to
/// its alignment (what the packers reserve in the worst case).
fn padded(it: &Item) -> u64 {
    crate::plan::align_up(it.size, it.align).unwrap_or(u64::MAX)
}

/// ` (N with padding to its A-byte alignment, from arena_alignment A of BANK)` when the
/// alignment costs bytes: a bank can be full of padding, not of data.
fn padding_note(inp: &Inputs<'_>, bank: &str, it: &Item) -> String {
    let with = padded(it);
    if with == it.size {
        return String::new();
    }
    let source = if inp.manifest.memory_alignment(bank) >= it.align {
        format!(
            ", from min_alignment or the arena_alignment of {bank}; lower it to save the padding"
        )
    } else {
        String::new()
    };
    format!(
        " ({with} with padding to its {}-byte alignment{source})",
        it.align
    )
}

/// A scratch tensor that fits no bank.
fn no_room(inp: &Inputs<'_>, i: usize, notes: &[SpillNote]) -> Error {
    let t = &inp.graph.tensors[i];
    let live = inp.lifetimes.live[i];
    let text: Vec<String> = notes.iter().map(|n| n.to_string()).collect();
    let e = Error::infeasible(format!(
        "no memory has room for tensor {} ({}): {} bytes over ops {}..={}; {}",
        t.id,
        t.name,
        inp.slot_size[i],
        live.map_or(0, |l| l.0),
        live.map_or(0, |l| l.1),
        text.join("; ")
    ))
    .help("raise max_size in memory.constraints, or add another writable bank to it");
    match notes.last() {
        Some(n) => inp.at_budget(e, &n.bank),
        None => e,
    }
}

/// The op in item `k`'s lifetime where the placed items take the most bytes, and how many
/// bytes of `capacity` are left there.
fn fullest_op(problem: &Problem, offsets: &[Option<u64>], k: usize, capacity: u64) -> (u32, u64) {
    let it = &problem.items[k];
    let mut best = (it.start, 0u64);
    let mut live: BTreeMap<u32, u64> = BTreeMap::new();
    for (j, other) in problem.items.iter().enumerate() {
        if j == k || offsets[j].is_none() || !it.overlaps_in_time(other) {
            continue;
        }
        let (s, e) = (other.start.max(it.start), other.end.min(it.end));
        for op in s..=e {
            let b = live.entry(op).or_insert(0);
            *b = b.saturating_add(padded(other));
        }
    }
    for (&op, &bytes) in &live {
        if bytes > best.1 {
            best = (op, bytes);
        }
    }
    (best.0, capacity.saturating_sub(best.1))
}
