//! Placement (the resolver): each tensor's role, runtime memory and source memory, and why.
//!
//! Rules come from `memory.tensors` with precedence catch-all < type-only < id-only <
//! type+id; at equal precedence the later rule wins. The user always wins over the defaults:
//! constants are read in place from a read-only memory that kernels can read when the
//! platform has one; persistent state goes to the first bank in preference order; scratch is
//! left to the packing stage, which fills the preferred bank first and spills to the next.

use std::string::{String, ToString};
use std::vec::Vec;

use crate::error::{Error, Result};
use crate::graph::{Graph, TensorKind};
use crate::lifetimes::Lifetimes;
use crate::manifest::{Manifest, Rule};
use crate::plan::ArenaRole;

/// Why a tensor landed where it did: a typed value, rendered only at the edge (`explain`,
/// build errors) by its `Display`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// A step-scope slab from `memory.slabs[index]`.
    Slab {
        /// Slab name.
        name: String,
        /// Index in `memory.slabs`.
        index: usize,
        /// True for a scratch slab (shares the scratch arena between runs).
        scratch: bool,
    },
    /// Pinned to its memory by a rule (described, e.g. `memory.tensors[2] (id "x")`).
    Pinned {
        /// The rule, described.
        rule: String,
    },
    /// A constant staged from `from` into `to` by a rule.
    StagedByRule {
        /// Source memory.
        from: String,
        /// Runtime memory.
        to: String,
        /// The rule, described.
        rule: String,
    },
    /// A constant staged into `to` by a rule, from the platform's read-only memory.
    StagedFromRom {
        /// The platform's read-only memory.
        rom: String,
        /// Runtime memory.
        to: String,
        /// The rule, described.
        rule: String,
    },
    /// A constant read in place where a rule put it.
    ColdPinned {
        /// Its memory.
        memory: String,
        /// The rule, described.
        rule: String,
    },
    /// A constant a rule sent to `memory`, read in place there: no read-only memory to
    /// stage from.
    ColdNoRom {
        /// Its memory.
        memory: String,
        /// The rule, described.
        rule: String,
    },
    /// A constant read in place from the platform's read-only memory (the default).
    ColdRom {
        /// The read-only memory.
        rom: String,
    },
    /// A constant in the first bank: the platform has no read-only memory.
    ColdFirstBank {
        /// The bank.
        bank: String,
    },
    /// Scratch or state in the first bank in preference order with room.
    FirstBank {
        /// Scratch or persistent.
        role: ArenaRole,
        /// The bank.
        bank: String,
    },
    /// Scratch that did not fit its preferred banks.
    Spilled {
        /// One note per bank that was full, in preference order.
        notes: Vec<SpillNote>,
    },
    /// An alias: shares the slot of tensor `of`.
    Alias {
        /// The id of the tensor whose slot it shares.
        of: String,
    },
}

/// Why a scratch tensor left a bank: it was full at `op`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillNote {
    /// The full bank.
    pub bank: String,
    /// The op where the bank had the least room left in the tensor's lifetime.
    pub op: u32,
    /// Bytes the tensor needs.
    pub needs: u64,
    /// Bytes left there.
    pub left: u64,
}

impl core::fmt::Display for SpillNote {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} full at op {} (needs {}, {} left)",
            self.bank, self.op, self.needs, self.left
        )
    }
}

impl core::fmt::Display for Reason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Reason::Slab {
                name,
                index,
                scratch,
            } => {
                write!(f, "step-scope slab `{name}` from memory.slabs[{index}]")?;
                if *scratch {
                    f.write_str(": shares the scratch arena, valid between model runs")?;
                }
                Ok(())
            }
            Reason::Pinned { rule } => write!(f, "pinned by {rule}"),
            Reason::StagedByRule { from, to, rule } => write!(f, "staged {from} -> {to} by {rule}"),
            Reason::StagedFromRom { rom, to, rule } => write!(
                f,
                "staged {rom} -> {to} by {rule} (source: the platform's read-only memory)"
            ),
            Reason::ColdPinned { memory, rule } => write!(f, "cold in {memory}: pinned by {rule}"),
            Reason::ColdNoRom { memory, rule } => write!(
                f,
                "cold in {memory} by {rule}: the platform has no read-only memory to stage from"
            ),
            Reason::ColdRom { rom } => {
                write!(f, "cold in {rom}: read-only memory readable in place")
            }
            Reason::ColdFirstBank { bank } => write!(
                f,
                "cold in {bank}: no read-only memory, first bank in preference order"
            ),
            Reason::FirstBank { role, bank } => write!(
                f,
                "{} in {bank}: first bank in preference order with room",
                role.name()
            ),
            Reason::Spilled { notes } => {
                f.write_str("spilled: ")?;
                for (k, n) in notes.iter().enumerate() {
                    if k > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{n}")?;
                }
                Ok(())
            }
            Reason::Alias { of } => write!(f, "alias of `{of}`: shares its slot"),
        }
    }
}

/// Where the resolver sends a tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Home {
    /// A fixed memory (pinned, a slab, or any constant), read from `source`.
    Memory {
        /// Runtime memory.
        memory: String,
        /// Where the bytes come from (differs from `memory` only for staged constants).
        source: String,
        /// Why.
        reason: Reason,
    },
    /// Scratch or state that is not pinned: the first bank in preference order with room,
    /// which the pipeline finds while it packs.
    FirstBankWithRoom,
}

/// The resolver's decision for one used tensor, finished: either a memory, or the rule by
/// which the pipeline picks one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Arena role.
    pub role: ArenaRole,
    /// Where it goes.
    pub home: Home,
    /// Index of the rule that decided it, if one did.
    pub rule: Option<usize>,
}

/// Where one tensor went, with why: the pipeline's final word, which `explain` renders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Arena role.
    pub role: ArenaRole,
    /// Runtime memory.
    pub memory: String,
    /// Where the bytes come from (differs from `memory` only for staged constants).
    pub source_memory: String,
    /// Index of the rule that decided it, if one did.
    pub rule: Option<usize>,
    /// Why.
    pub reason: Reason,
}

/// The resolver's output: one request per used tensor, and warnings.
#[derive(Debug, Clone)]
pub struct Placement {
    /// Per tensor; `None` for a tensor no op uses (it gets no bytes).
    pub requests: Vec<Option<Request>>,
    /// Rules that matched no tensor, staged constants, and the like.
    pub warnings: Vec<String>,
}

/// The role a tensor's kind implies.
pub fn role_of(kind: TensorKind) -> ArenaRole {
    match kind {
        TensorKind::Activation => ArenaRole::Scratch,
        TensorKind::Constant => ArenaRole::Constant,
        TensorKind::Variable => ArenaRole::Persistent,
    }
}

/// Decides role and home (a memory, or the first bank with room) for every used tensor.
pub fn resolve(manifest: &Manifest, graph: &Graph, lifetimes: &Lifetimes) -> Result<Placement> {
    let mut used_rules = vec![false; manifest.rules.len()];
    let mut requests = Vec::with_capacity(graph.tensors.len());
    let defaults = Defaults {
        rom: manifest
            .platform
            .memories
            .iter()
            .find(|m| !m.writable && m.readable_in_place)
            .map(|m| m.name.as_str()),
        first_bank: manifest.scratch_banks().first().map(|m| m.name.as_str()),
    };
    for (i, t) in graph.tensors.iter().enumerate() {
        if lifetimes.live[i].is_none() {
            requests.push(None);
            continue;
        }
        let role = role_of(t.kind);
        if let Some(r) = slab_request(manifest, role, &t.id) {
            requests.push(Some(r));
            continue;
        }
        let rule = best_rule(&manifest.rules, role, &t.id, &t.name);
        if let Some(r) = rule {
            used_rules[r.index] = true;
        }
        let request = match role {
            ArenaRole::Constant => constant_request(manifest, t, rule, &defaults)?,
            ArenaRole::Persistent | ArenaRole::Scratch => state_request(manifest, t, role, rule)?,
        };
        requests.push(Some(request));
    }
    let warnings = rule_warnings(manifest, graph, lifetimes, &used_rules);
    Ok(Placement { requests, warnings })
}

/// The platform's defaults for constants.
struct Defaults<'a> {
    /// A read-only memory kernels can read in place.
    rom: Option<&'a str>,
    /// The first scratch bank in preference order.
    first_bank: Option<&'a str>,
}

fn slab_request(manifest: &Manifest, role: ArenaRole, id: &str) -> Option<Request> {
    let (index, slab) = manifest
        .slabs
        .iter()
        .enumerate()
        .find(|(_, s)| s.tensor_id() == id)?;
    Some(Request {
        role,
        home: Home::Memory {
            memory: slab.memory.clone(),
            source: slab.memory.clone(),
            reason: Reason::Slab {
                name: slab.name.clone(),
                index,
                scratch: role == ArenaRole::Scratch,
            },
        },
        rule: None,
    })
}

/// Scratch or persistent state: pinned by a rule to a writable memory, or left to the
/// pipeline's bank order.
fn state_request(
    manifest: &Manifest,
    t: &crate::graph::Tensor,
    role: ArenaRole,
    rule: Option<&Rule>,
) -> Result<Request> {
    let Some((r, m)) = rule.and_then(|r| r.memory.as_ref().map(|m| (r, m))) else {
        return Ok(Request {
            role,
            home: Home::FirstBankWithRoom,
            rule: None,
        });
    };
    let writable = manifest.platform.memory(m).is_some_and(|mm| mm.writable);
    if !writable {
        return Err(manifest.rule_error(
            r,
            format!(
                "{} pins {} tensor `{}` ({}) to {m}, which is read-only",
                r.describe(),
                role.name(),
                t.id,
                t.name
            ),
            "narrow the rule with `type = \"constant\"`, or pin it to a writable memory",
        ));
    }
    Ok(Request {
        role,
        home: Home::Memory {
            memory: m.clone(),
            source: m.clone(),
            reason: Reason::Pinned { rule: r.describe() },
        },
        rule: Some(r.index),
    })
}

fn rule_warnings(
    manifest: &Manifest,
    graph: &Graph,
    lifetimes: &Lifetimes,
    used_rules: &[bool],
) -> Vec<String> {
    let mut warnings = Vec::new();
    for (r, used) in manifest.rules.iter().zip(used_rules) {
        if *used {
            continue;
        }
        let matched = graph
            .tensors
            .iter()
            .enumerate()
            .filter(|(i, t)| {
                lifetimes.live[*i].is_some() && r.matches(role_of(t.kind), &t.id, &t.name)
            })
            .count();
        let at = manifest.rule_location(r);
        warnings.push(if matched == 0 {
            format!("{} at {at} matches no tensor; fix its `id`/`type` or remove it", r.describe())
        } else {
            format!(
                "{} at {at} matches {matched} tensors, but a rule of higher precedence (or a later one) wins for each; remove it or narrow the others",
                r.describe()
            )
        });
    }
    warnings
}

fn best_rule<'a>(rules: &'a [Rule], role: ArenaRole, id: &str, name: &str) -> Option<&'a Rule> {
    rules
        .iter()
        .filter(|r| r.matches(role, id, name))
        .max_by_key(|r| (r.precedence(), r.index))
}

fn constant_request(
    manifest: &Manifest,
    t: &crate::graph::Tensor,
    rule: Option<&Rule>,
    defaults: &Defaults<'_>,
) -> Result<Request> {
    let memory_of = |name: &str| manifest.platform.memory(name);
    let (src, dest) = match rule {
        Some(r) => (r.memory.clone(), r.constant_destination_memory.clone()),
        None => (None, None),
    };
    let by = rule.map(|r| r.describe()).unwrap_or_default();
    let home = |memory: &str, source: &str, reason: Reason| Home::Memory {
        memory: memory.to_string(),
        source: source.to_string(),
        reason,
    };
    let home = match (src, dest) {
        (Some(s), Some(d)) if s != d => home(
            &d,
            &s,
            Reason::StagedByRule {
                from: s.clone(),
                to: d.clone(),
                rule: by,
            },
        ),
        (Some(s), _) => {
            let m = memory_of(&s);
            if let (Some(r), true) = (rule, m.is_some_and(|m| !m.writable && !m.readable_in_place))
            {
                return Err(manifest.rule_error(
                    r,
                    format!(
                        "{by} puts constant `{}` in {s}, which kernels cannot read in place",
                        t.id
                    ),
                    "add `constant_destination_memory` to stage it into a writable memory at init",
                ));
            }
            home(
                &s,
                &s,
                Reason::ColdPinned {
                    memory: s.clone(),
                    rule: by,
                },
            )
        }
        (None, Some(d)) => match defaults.rom {
            Some(rom) => home(
                &d,
                rom,
                Reason::StagedFromRom {
                    rom: rom.to_string(),
                    to: d.clone(),
                    rule: by,
                },
            ),
            None => home(
                &d,
                &d,
                Reason::ColdNoRom {
                    memory: d.clone(),
                    rule: by,
                },
            ),
        },
        (None, None) => match (defaults.rom, defaults.first_bank) {
            (Some(rom), _) => home(
                rom,
                rom,
                Reason::ColdRom {
                    rom: rom.to_string(),
                },
            ),
            (None, Some(bank)) => home(
                bank,
                bank,
                Reason::ColdFirstBank {
                    bank: bank.to_string(),
                },
            ),
            (None, None) => {
                return Err(Error::input(format!(
                    "constant `{}` has nowhere to go: platform {} has no read-only memory and no writable bank",
                    t.id, manifest.platform.name
                ))
                .help("add a memory, or a rule placing constants"));
            }
        },
    };
    // The platform defaults are no rule's doing, even when a rule matched without
    // saying where.
    let by_default = matches!(
        home,
        Home::Memory {
            reason: Reason::ColdRom { .. } | Reason::ColdFirstBank { .. },
            ..
        }
    );
    Ok(Request {
        role: ArenaRole::Constant,
        home,
        rule: if by_default {
            None
        } else {
            rule.map(|r| r.index)
        },
    })
}
