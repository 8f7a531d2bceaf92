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

/// Where one tensor goes, decided before any offset is chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Arena role.
    pub role: ArenaRole,
    /// Runtime memory; `None` for unpinned scratch, which the packing stage assigns to the
    /// first bank with room.
    pub memory: Option<String>,
    /// Where the bytes come from (differs from `memory` only for staged constants).
    pub source_memory: Option<String>,
    /// Index of the rule that decided it, if one did.
    pub rule: Option<usize>,
    /// Why, for `planner explain`.
    pub reason: String,
}

/// The resolver's output: one decision per used tensor, and warnings.
#[derive(Debug, Clone)]
pub struct Placement {
    /// Per tensor; `None` for a tensor no op uses (it gets no bytes).
    pub decisions: Vec<Option<Decision>>,
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

/// Decides role, memory and source memory for every used tensor.
pub fn resolve(manifest: &Manifest, graph: &Graph, lifetimes: &Lifetimes) -> Result<Placement> {
    let mut used_rules = vec![false; manifest.rules.len()];
    let mut decisions = Vec::with_capacity(graph.tensors.len());
    let default_rom = manifest
        .platform
        .memories
        .iter()
        .find(|m| !m.writable && m.readable_in_place);
    let first_bank = manifest.scratch_banks().first().map(|m| m.name.clone());
    for (i, t) in graph.tensors.iter().enumerate() {
        if lifetimes.live[i].is_none() {
            decisions.push(None);
            continue;
        }
        let role = role_of(t.kind);
        if let Some((k, slab)) = manifest
            .slabs
            .iter()
            .enumerate()
            .find(|(_, s)| s.tensor_id() == t.id)
        {
            decisions.push(Some(Decision {
                role,
                memory: Some(slab.memory.clone()),
                source_memory: Some(slab.memory.clone()),
                rule: None,
                reason: format!(
                    "step-scope slab `{}` from memory.slabs[{k}]{}",
                    slab.name,
                    if role == ArenaRole::Scratch {
                        ": shares the scratch arena, valid between model runs"
                    } else {
                        ""
                    }
                ),
            }));
            continue;
        }
        let rule = best_rule(&manifest.rules, role, &t.id, &t.name);
        if let Some(r) = rule {
            used_rules[r.index] = true;
        }
        let d = match role {
            ArenaRole::Constant => constant_decision(
                manifest,
                t,
                rule,
                default_rom.map(|m| m.name.as_str()),
                first_bank.as_deref(),
            )?,
            ArenaRole::Persistent | ArenaRole::Scratch => {
                match rule.and_then(|r| r.memory.as_ref().map(|m| (r, m))) {
                    Some((r, m)) => {
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
                        Decision {
                            role,
                            memory: Some(m.clone()),
                            source_memory: Some(m.clone()),
                            rule: Some(r.index),
                            reason: format!("pinned by {}", r.describe()),
                        }
                    }
                    None if role == ArenaRole::Persistent => Decision {
                        role,
                        memory: None,
                        source_memory: None,
                        rule: None,
                        reason: "persistent state: first bank in preference order with room"
                            .to_string(),
                    },
                    None => Decision {
                        role,
                        memory: None,
                        source_memory: None,
                        rule: None,
                        reason: String::new(),
                    },
                }
            }
        };
        decisions.push(Some(d));
    }
    let mut warnings = Vec::new();
    for (r, used) in manifest.rules.iter().zip(&used_rules) {
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
    Ok(Placement {
        decisions,
        warnings,
    })
}

fn best_rule<'a>(rules: &'a [Rule], role: ArenaRole, id: &str, name: &str) -> Option<&'a Rule> {
    rules
        .iter()
        .filter(|r| r.matches(role, id, name))
        .max_by_key(|r| (r.precedence(), r.index))
}

fn constant_decision(
    manifest: &Manifest,
    t: &crate::graph::Tensor,
    rule: Option<&Rule>,
    default_rom: Option<&str>,
    first_bank: Option<&str>,
) -> Result<Decision> {
    let memory_of = |name: &str| manifest.platform.memory(name);
    let (src, dest) = match rule {
        Some(r) => (r.memory.clone(), r.constant_destination_memory.clone()),
        None => (None, None),
    };
    let by = rule.map(|r| r.describe()).unwrap_or_default();
    let d = match (src, dest) {
        (Some(s), Some(d)) if s != d => Decision {
            role: ArenaRole::Constant,
            memory: Some(d.clone()),
            source_memory: Some(s.clone()),
            rule: rule.map(|r| r.index),
            reason: format!("staged {s} -> {d} by {by}"),
        },
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
            Decision {
                role: ArenaRole::Constant,
                memory: Some(s.clone()),
                source_memory: Some(s.clone()),
                rule: rule.map(|r| r.index),
                reason: format!("cold in {s}: pinned by {by}"),
            }
        }
        (None, Some(d)) => match default_rom {
            Some(rom) => Decision {
                role: ArenaRole::Constant,
                memory: Some(d.clone()),
                source_memory: Some(rom.to_string()),
                rule: rule.map(|r| r.index),
                reason: format!(
                    "staged {rom} -> {d} by {by} (source: the platform's read-only memory)"
                ),
            },
            None => Decision {
                role: ArenaRole::Constant,
                memory: Some(d.clone()),
                source_memory: Some(d.clone()),
                rule: rule.map(|r| r.index),
                reason: format!(
                    "cold in {d} by {by}: the platform has no read-only memory to stage from"
                ),
            },
        },
        (None, None) => match (default_rom, first_bank) {
            (Some(rom), _) => Decision {
                role: ArenaRole::Constant,
                memory: Some(rom.to_string()),
                source_memory: Some(rom.to_string()),
                rule: None,
                reason: format!("cold in {rom}: read-only memory readable in place"),
            },
            (None, Some(bank)) => Decision {
                role: ArenaRole::Constant,
                memory: Some(bank.to_string()),
                source_memory: Some(bank.to_string()),
                rule: None,
                reason: format!(
                    "cold in {bank}: no read-only memory, first bank in preference order"
                ),
            },
            (None, None) => {
                return Err(Error::input(format!(
                    "constant `{}` has nowhere to go: platform {} has no read-only memory and no writable bank",
                    t.id, manifest.platform.name
                ))
                .help("add a memory, or a rule placing constants"));
            }
        },
    };
    Ok(d)
}
