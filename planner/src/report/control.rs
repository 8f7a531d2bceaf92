//! How a model with control flow ([`Graph::control`]) reads in reports and pictures: one
//! line per `IF`, `WHILE` or `CALL_ONCE` with the op ranges of its subgraphs, each range as a
//! labelled band of the op axis, and, per tensor, the subgraph range its ops lie in.

use std::fmt::Write as _;
use std::string::String;
use std::vec::Vec;

use crate::graph::{Control, Graph, OpRange, TensorIndex};

/// One op range of a control entry: its range, a short label (`then`, `else`, `condition`,
/// `body`, `init`) and what runs it (`IF \`cond\` over ops 1..4`).
pub(crate) struct Part {
    /// The ops.
    pub range: OpRange,
    /// `then`, `else`, `condition`, `body` or `init`.
    pub label: &'static str,
    /// The entry that runs it.
    pub owner: String,
}

/// Every range of every control entry, in entry order.
pub(crate) fn parts(g: &Graph) -> Vec<Part> {
    let name = |t: u32| g.tensors.get(t as usize).map_or("?", |t| t.name.as_str());
    let mut out = Vec::new();
    for c in &g.control {
        let s = c.span();
        let owner = match *c {
            Control::If { cond, .. } | Control::While { cond, .. } => format!(
                "{} `{}` over ops {}..{}",
                c.name(),
                name(cond),
                s.start,
                s.end
            ),
            Control::Once { .. } => format!("CALL_ONCE over ops {}..{}", s.start, s.end),
        };
        let labels: &[&'static str] = match c {
            Control::If { .. } => &["then", "else"],
            Control::While { .. } => &["condition", "body"],
            Control::Once { .. } => &["init"],
        };
        for (range, label) in c.parts().into_iter().zip(labels) {
            out.push(Part {
                range,
                label,
                owner: owner.clone(),
            });
        }
    }
    out
}

/// The op order of a model with control flow, which is the model's (no other order is
/// tried): `op order: the model's, with its control flow`, then one line per entry with its
/// ranges.
pub fn summary(g: &Graph) -> String {
    let mut out = String::from(
        "op order: the model's, with its control flow (each subgraph's ops where the op that runs them stood):\n",
    );
    let parts = parts(g);
    let mut k = 0;
    while k < parts.len() {
        let owner = &parts[k].owner;
        let mine: Vec<&Part> = parts[k..].iter().take_while(|p| &p.owner == owner).collect();
        let ranges: Vec<String> = mine
            .iter()
            .map(|p| format!("{} ops {}..{}", p.label, p.range.start, p.range.end))
            .collect();
        let _ = writeln!(out, "  {owner}: {}", ranges.join(", "));
        k += mine.len();
    }
    out
}

/// For tensor `t` whose ops all lie in one subgraph's range: `; in the <label> of <owner>`
/// (the innermost such range); empty otherwise.
pub(crate) fn place_of(g: &Graph, t: usize) -> String {
    if g.control.is_empty() {
        return String::new();
    }
    let t = TensorIndex(t as u32);
    let ops: Vec<u32> = g
        .ops
        .iter()
        .enumerate()
        .filter(|(_, op)| op.tensors().any(|x| x == t))
        .map(|(k, _)| k as u32)
        .collect();
    let (Some(&first), Some(&last)) = (ops.first(), ops.last()) else {
        return String::new();
    };
    parts(g)
        .into_iter()
        .filter(|p| p.range.contains(first) && p.range.contains(last))
        .min_by_key(|p| p.range.end - p.range.start)
        .map(|p| format!("; in the {} of the {}", p.label, p.owner))
        .unwrap_or_default()
}
