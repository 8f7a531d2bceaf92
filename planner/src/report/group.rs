//! Reports of a group plan: the group's arenas with their users, then each model.

use std::fmt::Write as _;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::pipeline::{GroupPlanned, users_of};

/// The heading of a group's report: `group NAME<sep> N models (a, b)`.
#[doc(hidden)]
pub fn group_title(group: &str, models: &[&str], sep: &str) -> String {
    format!(
        "group {group}{sep} {} models ({})",
        models.len(),
        models.join(", ")
    )
}

/// The group's arenas (bytes, what separate plans would take, lower bound, users with
/// their base offsets), then every model's own table.
pub fn group_table(planned: &GroupPlanned) -> String {
    let mut s = String::new();
    let names: Vec<&str> = planned.models.iter().map(|m| m.model.as_str()).collect();
    let _ = writeln!(s, "{}", group_title(&planned.name, &names, ":"));
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

/// The group as one JSON object: `format_version`, `group`, `concurrent` (sets of model
/// names), `arenas` (each group arena's `name`, `memory`, `role`, `source_memory`,
/// `alignment`, `used`, `separate`, `lower_bound`, `budget` (the bytes the memory's budget
/// leaves this arena, `null` without a budget) and its `users`: `model`, `base`, `bytes`),
/// then `models`: each model's plan as
/// [`crate::report::json`] gives it (offsets in the group's arenas).
pub fn group_json(planned: &GroupPlanned) -> String {
    use serde_json::{Value, json};
    let name = |k: usize| planned.models.get(k).map_or("", |m| m.model.as_str());
    let arenas: Vec<Value> = planned
        .arenas
        .iter()
        .map(|ga| {
            let mut a = serde_json::to_value(&ga.arena).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut a {
                let arena_name = format!("{}.{}", ga.arena.role.name(), ga.arena.memory);
                map.insert("name".into(), json!(arena_name));
                map.insert("separate".into(), json!(ga.separate));
                map.insert("lower_bound".into(), json!(ga.lower_bound));
                // `total_size` (the arena record's) read as the arena's size beside `used`;
                // it is the room the budget leaves, so it goes by that name, null when
                // the memory has none.
                map.remove("total_size");
                map.insert("budget".into(), json!(ga.budget));
                let users: Vec<Value> = ga
                    .users
                    .iter()
                    .map(|u| json!({"model": name(u.model), "base": u.base, "bytes": u.bytes}))
                    .collect();
                map.insert("users".into(), Value::Array(users));
            }
            a
        })
        .collect();
    let models: Vec<Value> = planned
        .models
        .iter()
        .map(|m| serde_json::from_str(&crate::report::json(m)).unwrap_or(Value::Null))
        .collect();
    let concurrent: Vec<Vec<&str>> = planned
        .concurrent
        .iter()
        .map(|set| set.iter().map(|&k| name(k)).collect())
        .collect();
    let out = json!({
        "format_version": crate::report::JSON_FORMAT_VERSION,
        "group": planned.name,
        "concurrent": concurrent,
        "arenas": arenas,
        "models": models,
    });
    // Plain maps, strings and integers: serialising cannot fail.
    serde_json::to_string_pretty(&out).unwrap_or_default() + "\n"
}

/// One CSV row per user of each group arena: `arena,role,memory,arena_bytes,model,base,bytes`,
/// after a header row; for a group planned for a kernel set that prepares (`[kernels] set =
/// "optimized"`), each row ends with its model's kernel figures ([`super::KernelFigures`]:
/// `kernels,prepared_bytes,kernel_scratch_bytes,kernel_scratch_largest,
/// other_set_kernel_scratch_bytes`). Names with a comma or a quote are quoted.
pub fn group_csv(planned: &GroupPlanned) -> String {
    fn field(s: &str) -> String {
        if s.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    }
    // A group planned for a kernel set that prepares: each row gets its model's figures.
    let kernels: Vec<super::KernelFigures> = planned.models.iter().map(super::figures).collect();
    let with_kernels = kernels
        .iter()
        .any(|k| k.set != crate::graph::KernelSet::Reference);
    let mut s = String::from("arena,role,memory,arena_bytes,model,base,bytes");
    if with_kernels {
        s.push_str(
            ",kernels,prepared_bytes,kernel_scratch_bytes,kernel_scratch_largest,other_set_kernel_scratch_bytes",
        );
    }
    s.push('\n');
    for ga in &planned.arenas {
        let a = &ga.arena;
        for u in &ga.users {
            let model = planned.models.get(u.model).map_or("", |m| m.model.as_str());
            let _ = write!(
                s,
                "{},{},{},{},{},{},{}",
                field(&format!("{}.{}", a.role.name(), a.memory)),
                a.role.name(),
                field(&a.memory),
                a.used,
                field(model),
                u.base,
                u.bytes
            );
            if let Some(k) = kernels.get(u.model).filter(|_| with_kernels) {
                let _ = write!(
                    s,
                    ",{},{},{},{},{}",
                    k.set.name(),
                    k.prepared_bytes,
                    k.kernel_scratch.bytes,
                    k.kernel_scratch.largest,
                    k.other_set_kernel_scratch.bytes
                );
            }
            s.push('\n');
        }
    }
    s
}
