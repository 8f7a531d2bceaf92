//! Stage 5: scratch. Pinned tensors are packed first in their banks; the rest fill the banks
//! in preference order, and a tensor that does not fit spills to the next bank.

use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::vec::Vec;

use super::state::State;
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

/// Fills the scratch banks; errors when a bank overflows with pinned tensors or when a
/// tensor fits no bank.
pub(super) fn fill(st: &mut State<'_>) -> Result<()> {
    let preferred: Vec<String> = st
        .manifest
        .scratch_banks()
        .iter()
        .map(|m| m.name.clone())
        .collect();
    let mut banks = Banks {
        all: preferred.clone(),
        preferred,
        pinned: BTreeMap::new(),
    };
    let mut carry: Vec<usize> = Vec::new();
    for (i, r) in st.roots_of(ArenaRole::Scratch) {
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
    let mut spills: BTreeMap<usize, Vec<SpillNote>> = BTreeMap::new();
    for bi in 0..banks.all.len() {
        carry = fill_bank(st, &banks, bi, carry, &mut spills)?;
    }
    if let Some(&i) = carry.first() {
        return Err(no_room(st, i, spills.get(&i).map_or(&[], |v| v)));
    }
    let spilled = st
        .decided
        .iter()
        .flatten()
        .filter(|d| matches!(d.reason, Reason::Spilled { .. }))
        .count();
    if spilled > 0 {
        st.warnings.push(format!(
            "{spilled} scratch tensors spilled past their preferred bank (see `planner explain`)"
        ));
    }
    Ok(())
}

/// Packs bank `bi`: its pinned tensors and, for a preferred bank, everything carried from
/// the banks before it. Returns what did not fit.
fn fill_bank(
    st: &mut State<'_>,
    banks: &Banks,
    bi: usize,
    mut carry: Vec<usize>,
    spills: &mut BTreeMap<usize, Vec<SpillNote>>,
) -> Result<Vec<usize>> {
    let bank = &banks.all[bi];
    let in_preference = bi < banks.preferred.len();
    let pins: &[usize] = banks.pinned.get(bank).map_or(&[], |v| v);
    let movers: Vec<usize> = if in_preference {
        std::mem::take(&mut carry)
    } else {
        Vec::new()
    };
    if pins.is_empty() && movers.is_empty() {
        return Ok(carry);
    }
    let members: Vec<usize> = pins.iter().chain(&movers).copied().collect();
    let capacity = st.budget_left.get(bank).copied().flatten();
    // The packers work below the largest arena even in an unlimited memory, so no height
    // or offset they compute can overflow.
    let limit = capacity.map_or(MAX_ARENA, |c| c.min(MAX_ARENA));
    let last_bank = bi + 1 == banks.preferred.len() || !in_preference;
    let problem = bank_problem(st, bank, &members, pins.len(), Some(limit), last_bank);
    let report = pack::pack_report(&st.manifest.planner, &problem);
    let packing = report.packing;
    let mut placed = Vec::new();
    for (k, (&i, off)) in members.iter().zip(&packing.offsets).enumerate() {
        match off {
            Some(o) => {
                st.offsets[i] = Some(*o);
                placed.push(k);
                decide(st, i, bank, spills.remove(&i));
            }
            None => {
                let (op, left) = fullest_op(&problem, &packing.offsets, k, limit);
                spills.entry(i).or_default().push(SpillNote {
                    bank: bank.clone(),
                    op,
                    needs: padded(&problem.items[k]),
                    left,
                });
                carry.push(i);
            }
        }
    }
    if packing.height > limit {
        return Err(bank_full(
            st,
            banks,
            bank,
            &members,
            pins.len(),
            &problem,
            &packing,
            limit,
        ));
    }
    // The bound of the placed items, the one the certificate's `optimal` rests on.
    let lower_bound = report.certificate.lower_bound;
    let used = packing.height;
    let align = placed
        .iter()
        .map(|&k| problem.items[k].align)
        .max()
        .unwrap_or(1);
    let base = st.arena_base_align(bank, align);
    let mut arena = ArenaUsage::new(bank.clone(), ArenaRole::Scratch, bank.clone(), 0, base);
    arena.used = used;
    arena.total_size = st.share(bank, used);
    st.plan.arena_usages.insert(bank.clone(), arena);
    st.reports.push(ArenaReport {
        memory: bank.clone(),
        used,
        budget: capacity,
        lower_bound,
        fragmentation: used.saturating_sub(lower_bound),
        // The height reaches the lower bound, or the exact search proved it.
        optimal: report.certificate.optimal,
    });
    Ok(carry)
}

/// Puts the two slots of each split in-place pair ([`crate::lifetimes::Lifetimes::split`])
/// at one offset: the output's slot moves to the input's offset, or the input's to the
/// output's, where that range is free over the moved slot's ops and inside the arena's
/// height. Returns the pairs neither move works for.
pub(super) fn join_split(st: &mut State<'_>) -> Vec<Unjoined> {
    let mut failed = Vec::new();
    for &(input, output) in &st.lifetimes.split {
        let (ri, ro) = (
            st.lifetimes.slot_of[input.get()].get(),
            st.lifetimes.slot_of[output.get()].get(),
        );
        let unjoined = |input_offset| Unjoined {
            output,
            input_slot: TensorIndex(ri as u32),
            output_slot: TensorIndex(ro as u32),
            input_offset,
        };
        let (Some(di), Some(d_o)) = (&st.decided[ri], &st.decided[ro]) else {
            failed.push(unjoined(None));
            continue;
        };
        let (Some(oi), Some(oo)) = (st.offsets[ri], st.offsets[ro]) else {
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
        let memory = di.memory.clone();
        if free_at(st, ro, oi, &memory) {
            st.offsets[ro] = Some(oi);
        } else if free_at(st, ri, oo, &memory) {
            st.offsets[ri] = Some(oo);
        } else {
            failed.push(unjoined(Some(oi)));
        }
    }
    failed
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

/// True when slot root `r` can move to `offset` of scratch bank `memory`: aligned, inside
/// the arena's height, and clear of every other slot live at one of its ops.
fn free_at(st: &State<'_>, r: usize, offset: u64, memory: &str) -> bool {
    let size = st.slot_size[r];
    let height = st
        .reports
        .iter()
        .find(|a| a.memory == memory)
        .map_or(0, |a| a.used);
    let Some((a, b)) = st.lifetimes.live[r] else {
        return false;
    };
    if !offset.is_multiple_of(st.slot_align(r, memory)) || offset.saturating_add(size) > height {
        return false;
    }
    st.roots.iter().all(|&j| {
        if j == r || st.slot_size[j] == 0 {
            return true;
        }
        let (Some(d), Some(o), Some((s, e))) =
            (&st.decided[j], st.offsets[j], st.lifetimes.live[j])
        else {
            return true;
        };
        d.role != ArenaRole::Scratch
            || d.memory != memory
            || e < a
            || b < s
            || o.saturating_add(st.slot_size[j]) <= offset
            || offset.saturating_add(size) <= o
    })
}

/// The packing problem of one bank: pinned members first (never spilled), then movers,
/// which may spill unless this is the last bank they can go to.
fn bank_problem(
    st: &State<'_>,
    bank: &str,
    members: &[usize],
    pins: usize,
    capacity: Option<u64>,
    last_bank: bool,
) -> Problem {
    let last = st.last_op();
    Problem {
        items: members
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let (start, end) = st.lifetimes.live[i].unwrap_or((0, last));
                Item {
                    size: st.slot_size[i],
                    start,
                    end,
                    align: st.slot_align(i, bank),
                    fixed: st.fixed.get(&TensorIndex(i as u32)).copied(),
                    spillable: k >= pins && !last_bank,
                }
            })
            .collect(),
        capacity,
    }
}

/// Records that scratch tensor `i` went to `bank`: pinned ones keep their reason, movers
/// say whether they spilled.
fn decide(st: &mut State<'_>, i: usize, bank: &str, notes: Option<Vec<SpillNote>>) {
    let Some(r) = &st.requests[i] else { return };
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
    st.decided[i] = Some(Decision {
        role: r.role,
        memory: bank.into(),
        source_memory: bank.into(),
        rule: r.rule,
        reason,
    });
}

/// A bank whose unspillable tensors pass its capacity: names the highest one.
#[allow(clippy::too_many_arguments)]
fn bank_full(
    st: &State<'_>,
    banks: &Banks,
    bank: &str,
    members: &[usize],
    pins: usize,
    problem: &Problem,
    packing: &Packing,
    cap: u64,
) -> Error {
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
        let next = banks.preferred.iter().find(|b| *b != bank);
        format!(
            "raise the max_size of {bank}{}",
            next.map(|n| format!(" or let it spill to {n} (unpin it)"))
                .unwrap_or_default()
        )
    } else {
        format!("raise the max_size of {bank}, or add a bank to memory.constraints")
    };
    let t = &st.graph.tensors[i];
    let it = &problem.items[k];
    // What the bank would need: the bound of every tensor that cannot leave it.
    let stays: Vec<bool> = (0..members.len())
        .map(|k| k < pins || !problem.items[k].spillable)
        .collect();
    let need = pack::lower_bound_of(problem, Some(&stays));
    let count = stays.iter().filter(|&&s| s).count();
    let e = Error::infeasible(format!(
        "memory {bank} is full: tensor {} ({}) needs {} bytes{} at op {op}, {left} left; the {count} scratch tensors that must stay in {bank} need at least {need} bytes, and {bank} has {cap} for scratch{}; {fix}",
        t.id,
        t.name,
        it.size,
        padding_note(st, bank, it),
        charged_note(st, bank),
    ));
    st.at_budget(e, bank)
}

/// `(its budget of B less U of constants and state)` when other arenas took part of the
/// bank's budget before scratch.
fn charged_note(st: &State<'_>, bank: &str) -> String {
    match (st.manifest.budget(bank), st.charged.get(bank)) {
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
fn padding_note(st: &State<'_>, bank: &str, it: &Item) -> String {
    let with = padded(it);
    if with == it.size {
        return String::new();
    }
    let source = if st.manifest.memory_alignment(bank) >= it.align {
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
fn no_room(st: &State<'_>, i: usize, notes: &[SpillNote]) -> Error {
    let t = &st.graph.tensors[i];
    let live = st.lifetimes.live[i];
    let text: Vec<String> = notes.iter().map(|n| n.to_string()).collect();
    let e = Error::infeasible(format!(
        "no memory has room for tensor {} ({}): {} bytes over ops {}..={}; {}",
        t.id,
        t.name,
        st.slot_size[i],
        live.map_or(0, |l| l.0),
        live.map_or(0, |l| l.1),
        text.join("; ")
    ))
    .help("raise max_size in memory.constraints, or add another writable bank to it");
    match notes.last() {
        Some(n) => st.at_budget(e, &n.bank),
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
