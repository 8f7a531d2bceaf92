//! Reports of a group plan: the group's arenas with their users, then each model.

use std::fmt::Write as _;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::pipeline::{GroupPlanned, users_of};

/// The group's arenas (bytes, what separate plans would take, lower bound, users with
/// their base offsets), then every model's own table.
pub fn group_table(planned: &GroupPlanned) -> String {
    let mut s = String::new();
    let names: Vec<&str> = planned.models.iter().map(|m| m.model.as_str()).collect();
    let _ = writeln!(
        s,
        "group {}: {} models ({})",
        planned.name,
        names.len(),
        names.join(", ")
    );
    let sets: Vec<String> = planned
        .concurrent
        .iter()
        .map(|set| {
            let n: Vec<&str> = set.iter().filter_map(|&k| names.get(k).copied()).collect();
            format!("[{}]", n.join(", "))
        })
        .collect();
    let _ = writeln!(
        s,
        "concurrent: {}",
        if sets.is_empty() {
            "none (models run one after another)".into()
        } else {
            sets.join(" ")
        }
    );
    if planned.shared_constants > 0 {
        let _ = writeln!(
            s,
            "constant slots stored once for several models: {}",
            planned.shared_constants
        );
    }
    let _ = writeln!(
        s,
        "\n{:<10} {:<10} {:>10} {:>10} {:>10} {:>10}  users (model@base+bytes)",
        "role", "memory", "group", "separate", "saved", "lower"
    );
    // A group can take more than separate plans (a persistent arena is never shared, and
    // each user's base is aligned): `saved` is then negative, and the total says it costs.
    for a in &planned.arenas {
        let users: Vec<String> = a
            .users
            .iter()
            .map(|u| {
                let name = names.get(u.model).copied().unwrap_or("?");
                format!("{name}@{}+{}", u.base, u.bytes)
            })
            .collect();
        let _ = writeln!(
            s,
            "{:<10} {:<10} {:>10} {:>10} {:>10} {:>10}  {}",
            a.arena.role.name(),
            a.arena.memory,
            a.arena.used,
            a.separate,
            saved(a.separate, a.arena.used),
            a.lower_bound,
            users.join(", ")
        );
    }
    let (group, separate) = planned.arenas.iter().fold((0u64, 0u64), |(g, p), a| {
        (g.saturating_add(a.arena.used), p.saturating_add(a.separate))
    });
    let verdict = match separate.cmp(&group) {
        std::cmp::Ordering::Greater => format!("{} saved", separate - group),
        std::cmp::Ordering::Equal => "the same: nothing saved".into(),
        std::cmp::Ordering::Less => format!(
            "the group costs {} more than separate plans",
            group - separate
        ),
    };
    let _ = writeln!(
        s,
        "total: {group} bytes for the group, {separate} as separate plans; {verdict}"
    );
    for m in &planned.models {
        let _ = writeln!(s, "\n== model {} (offsets in the group's arenas)", m.model);
        s.push_str(&super::table(m, &m.graph));
    }
    s
}

/// Bytes a group arena saves against separate plans: negative (`-64`) when it takes more.
fn saved(separate: u64, group: u64) -> String {
    if separate >= group {
        (separate - group).to_string()
    } else {
        format!("-{}", group - separate)
    }
}

/// `explain` for every model of the group, each under its name, after the arenas' users.
pub fn group_explain(planned: &GroupPlanned, only: Option<&str>) -> String {
    let mut s = String::new();
    for a in &planned.arenas {
        let _ = writeln!(
            s,
            "{} arena in {} ({} bytes): used by {}",
            a.arena.role.name(),
            a.arena.memory,
            a.arena.used,
            users_of(planned, a)
        );
    }
    for m in &planned.models {
        let _ = writeln!(s, "\n== model {}", m.model);
        s.push_str(&super::explain(m, &m.graph, only));
    }
    s
}
