//! Reports of a finished plan: a table for people, JSON for tools, `explain` lines.
//!
//! The JSON object's keys are the [`MemoryPlan`](crate::plan::MemoryPlan) fields
//! (`tensor_allocs`, `arena_usages`, `persistent_arenas`, `constant_arenas`,
//! `tensor_lifetimes`) plus `format_version`, `model` and `planner`.

use std::fmt::Write as _;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::graph::Graph;
use crate::pipeline::Planned;

mod group;
pub use group::{group_explain, group_table};

/// Version of the JSON report's shape.
pub const JSON_FORMAT_VERSION: u32 = 1;

/// The plan as one JSON object (pretty-printed, keys in a fixed order).
pub fn json(planned: &Planned) -> String {
    #[derive(serde::Serialize)]
    struct Out<'a> {
        format_version: u32,
        model: &'a str,
        planner: &'a str,
        #[serde(flatten)]
        plan: &'a crate::plan::MemoryPlan,
    }
    let out = Out {
        format_version: JSON_FORMAT_VERSION,
        model: &planned.model,
        planner: &planned.planner,
        plan: &planned.plan,
    };
    // Serialising plain maps, strings and integers cannot fail.
    serde_json::to_string_pretty(&out).unwrap_or_default()
}

fn fmt_budget(b: Option<u64>) -> String {
    b.map_or_else(|| "unlimited".into(), |b| b.to_string())
}

/// A table for people: per arena (memory, role, used, budget, lower bound, fragmentation),
/// then one row per tensor.
pub fn table(planned: &Planned, graph: &Graph) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "model {} · planner {} · {} ops · {} tensors",
        planned.model,
        planned.planner,
        planned.ops,
        graph.tensors.len()
    );
    let _ = writeln!(s);
    let mut rows: Vec<[String; 8]> = vec![[
        "memory".into(),
        "role".into(),
        "source".into(),
        "used".into(),
        "budget".into(),
        "lower bound".into(),
        "fragmentation".into(),
        "optimal".into(),
    ]];
    for r in &planned.scratch_reports {
        let a = &planned.plan.arena_usages[&r.memory];
        rows.push([
            r.memory.clone(),
            "scratch".into(),
            a.source_memory.clone(),
            r.used.to_string(),
            fmt_budget(r.budget),
            r.lower_bound.to_string(),
            r.fragmentation.to_string(),
            if r.optimal { "yes".into() } else { "-".into() },
        ]);
    }
    for a in planned
        .plan
        .persistent_arenas
        .values()
        .chain(planned.plan.constant_arenas.values())
    {
        rows.push([
            a.memory.clone(),
            if a.is_staged() {
                "constant (staged)".into()
            } else {
                a.role.name().into()
            },
            a.source_memory.clone(),
            a.used.to_string(),
            a.total_size.to_string(),
            "-".into(),
            "-".into(),
            "-".into(),
        ]);
    }
    write_rows(&mut s, &rows);
    let _ = writeln!(s);
    let mut rows: Vec<[String; 7]> = vec![[
        "id".into(),
        "name".into(),
        "role".into(),
        "memory".into(),
        "offset".into(),
        "size".into(),
        "ops".into(),
    ]];
    for t in &graph.tensors {
        let Some(a) = planned.plan.tensor_allocs.get(&t.id) else {
            continue;
        };
        let Some(b) = &a.binding else { continue };
        let lt = planned.plan.tensor_lifetimes.get(&t.id);
        let memory = if b.is_staged() {
            format!("{}<-{}", b.memory, b.source_memory)
        } else {
            b.memory.clone()
        };
        rows.push([
            t.id.clone(),
            truncate(&t.name, 48),
            b.role.name().into(),
            memory,
            b.offset.to_string(),
            a.size.to_string(),
            lt.map_or_else(String::new, |l| format!("{}..={}", l.start_op, l.end_op)),
        ]);
    }
    write_rows(&mut s, &rows);
    s
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.into()
    } else {
        let head: String = s.chars().take(n - 1).collect();
        format!("{head}…")
    }
}

fn write_rows<const N: usize>(s: &mut String, rows: &[[String; N]]) {
    let mut widths = [0usize; N];
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    for r in rows {
        let mut line = String::new();
        for (k, (c, w)) in r.iter().zip(widths).enumerate() {
            let numeric = k > 0 && c.chars().all(|ch| ch.is_ascii_digit()) && !c.is_empty();
            if numeric {
                let _ = write!(line, "{c:>w$}  ");
            } else {
                let _ = write!(line, "{c:<w$}  ");
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
}

/// One line per tensor (or only tensor `only`, by id or name):
/// `<id> <name>: <role>/<memory>[<-source>] @<offset> +<size> — <why>`.
pub fn explain(planned: &Planned, graph: &Graph, only: Option<&str>) -> String {
    let mut s = String::new();
    for (i, t) in graph.tensors.iter().enumerate() {
        if only.is_some_and(|o| o != t.id && o != t.name) {
            continue;
        }
        let d = planned.decisions.get(i).and_then(|d| d.as_ref());
        let a = planned.plan.tensor_allocs.get(&t.id);
        match (d, a.and_then(|a| a.binding.as_ref())) {
            (Some(d), Some(b)) => {
                let src = if b.is_staged() {
                    format!("<-{}", b.source_memory)
                } else {
                    String::new()
                };
                let _ = writeln!(
                    s,
                    "{} {}: {}/{}{src} @{} +{} — {}",
                    t.id,
                    t.name,
                    b.role.name(),
                    b.memory,
                    b.offset,
                    t.size,
                    d.reason
                );
            }
            _ => {
                let _ = writeln!(
                    s,
                    "{} {}: unplaced +{} — unused: no op reads or writes it and it is not a model input or output",
                    t.id, t.name, t.size
                );
            }
        }
    }
    s
}
