//! A memory map of a plan as an SVG picture.
//!
//! One panel per arena (scratch, then persistent, then constant, each by memory), stacked
//! top to bottom. In a panel, x is the op (one column per op of the schedule) and y the byte
//! offset (0 at the bottom); each placed tensor is one `<rect class="tensor ...">` from its
//! first to its last op and from its offset to its end, coloured by role (model input,
//! model output, activation, state, constant, staged constant, slab), with a `<title>`
//! giving its id, name, size, offset and lifetime (browsers show it on hover). An alias
//! (a tensor sharing another's bytes) is drawn dashed over its target. Scratch panels mark
//! the lower bound (a dashed line: no placement can be lower) and the peak op (the op with
//! the most live bytes, shaded). Output is deterministic: same plan, same bytes.
//!
//! [`group_svg`] draws a group: one panel per group arena, the models side by side (each
//! its own ops), y the offset in the shared arena, each model's block outlined, so models
//! that run in turn are seen reusing the same bytes and concurrent ones side by side. As a
//! model's, a group's scratch panels mark the group's lower bound (dashed) and shade its peak
//! op: the op, in whichever model, with the most live bytes in that arena.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::string::String;
use std::vec::Vec;

use crate::SolvedProblem;
use crate::graph::{Graph, TensorIndex, TensorKind};
use crate::import::csv::CsvProblem;
use crate::pipeline::{GroupArena, GroupPlanned, Planned};
use crate::plan::{ArenaRole, ArenaUsage};

/// Width of the op axis, in pixels.
const PLOT_W: f64 = 960.0;
/// Height of one panel's plot, in pixels.
const PLOT_H: f64 = 260.0;
/// Left margin (offset labels).
const LEFT: f64 = 90.0;
/// Space above each panel's plot (its title).
const TITLE_H: f64 = 44.0;
/// Space below each panel's plot (op labels).
const AXIS_H: f64 = 30.0;

/// One tensor's colour class and legend text.
const ROLES: [(&str, &str, &str); 7] = [
    ("input", "#2e7d32", "model input"),
    ("output", "#ef6c00", "model output"),
    ("activation", "#1565c0", "activation"),
    ("state", "#6a1b9a", "persistent state"),
    ("constant", "#757575", "constant"),
    ("staged", "#8d6e63", "staged constant (copied at init)"),
    ("slab", "#f9a825", "step-scope slab"),
];

/// Escapes text for an XML attribute or element.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Not characters XML 1.0 allows in a document.
            c if (c as u32) < 0x20 && c != '\t' => out.push(' '),
            '\u{fffe}' | '\u{ffff}' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// One tensor drawn in a panel.
struct Bar {
    index: usize,
    offset: u64,
    size: u64,
    start: u32,
    end: u32,
    class: &'static str,
    alias: bool,
}

fn class_of(planned: &Planned, g: &Graph, i: usize, staged: bool) -> &'static str {
    let t = &g.tensors[i];
    let ti = TensorIndex(i as u32);
    if t.id.starts_with("slab/") {
        "slab"
    } else if staged {
        "staged"
    } else {
        match t.kind {
            TensorKind::Constant => "constant",
            TensorKind::Variable => "state",
            TensorKind::Activation if g.inputs.iter().any(|io| io.tensor == ti) => "input",
            TensorKind::Activation if g.outputs.iter().any(|io| io.tensor == ti) => "output",
            TensorKind::Activation => {
                let persistent = planned
                    .plan
                    .binding(&t.id)
                    .is_some_and(|b| b.role == ArenaRole::Persistent);
                if persistent { "state" } else { "activation" }
            }
        }
    }
}

/// The tensors of the arena (`role`, `memory`), in graph order.
fn bars(planned: &Planned, arena: &ArenaUsage) -> Vec<Bar> {
    let g = &planned.graph;
    let last = planned.ops.saturating_sub(1);
    let aliases: BTreeSet<usize> = g.aliases.iter().map(|(a, _)| a.get()).collect();
    let mut out = Vec::new();
    for (i, t) in g.tensors.iter().enumerate() {
        let Some(a) = planned.plan.tensor_allocs.get(&t.id) else {
            continue;
        };
        let Some(b) = &a.binding else { continue };
        if b.role != arena.role || b.memory != arena.memory {
            continue;
        }
        let (start, end) = planned
            .plan
            .tensor_lifetimes
            .get(&t.id)
            .map_or((0, last), |l| (l.start_op, l.end_op));
        out.push(Bar {
            index: i,
            offset: b.offset,
            size: a.size,
            start,
            end,
            class: class_of(planned, g, i, b.is_staged()),
            alias: aliases.contains(&i),
        });
    }
    out
}

/// The op with the most live bytes among `bars` (aliases counted once), and that sum; the
/// first such op on a tie. One sweep over the ops with the bars' starts and ends bucketed:
/// linear in ops plus bars (a CSV problem has a million of each).
fn peak(bars: &[Bar], ops: u32) -> (u32, u64) {
    let n = ops.max(1) as usize;
    // Bytes that become live at each op, and bytes that stop being live after it.
    let mut starts = vec![0u64; n];
    let mut ends = vec![0u64; n];
    for b in bars.iter().filter(|b| !b.alias) {
        let (start, end) = (b.start as usize, b.end as usize);
        if start > end || start >= n {
            continue;
        }
        starts[start] = starts[start].saturating_add(b.size);
        let end = end.min(n - 1);
        ends[end] = ends[end].saturating_add(b.size);
    }
    let mut best = (0, 0);
    let mut live = 0u64;
    for op in 0..n {
        live = live.saturating_add(starts[op]);
        if live > best.1 {
            best = (op as u32, live);
        }
        live = live.saturating_sub(ends[op]);
    }
    best
}

/// The picture of `planned`: one panel per arena.
pub fn svg(planned: &Planned) -> String {
    let arenas: Vec<&ArenaUsage> = planned.plan.arenas().collect();
    let panel_h = TITLE_H + PLOT_H + AXIS_H;
    let legend_h = 40.0;
    let width = LEFT + PLOT_W + 20.0;
    let height = legend_h + panel_h * arenas.len() as f64 + 10.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(
        s,
        "<title>memory map of model {} (planner {})</title>",
        esc(&planned.model),
        esc(&planned.planner)
    );
    let _ = writeln!(
        s,
        "<rect class=\"background\" x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    legend(&mut s);
    for (k, arena) in arenas.iter().enumerate() {
        panel(&mut s, planned, arena, legend_h + panel_h * k as f64);
    }
    s.push_str("</svg>\n");
    s
}

/// The picture of a group: one panel per group arena, the models side by side.
pub fn group_svg(group: &GroupPlanned) -> String {
    let panel_h = TITLE_H + PLOT_H + AXIS_H + 16.0;
    let legend_h = 40.0;
    let width = LEFT + PLOT_W + 20.0;
    let height = legend_h + panel_h * group.arenas.len() as f64 + 10.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let names: Vec<&str> = group.models.iter().map(|m| m.model.as_str()).collect();
    let _ = writeln!(
        s,
        "<title>memory map of group {} (models {})</title>",
        esc(&group.name),
        esc(&names.join(", "))
    );
    let _ = writeln!(
        s,
        "<rect class=\"background\" x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    legend(&mut s);
    for (k, arena) in group.arenas.iter().enumerate() {
        group_panel(&mut s, group, arena, legend_h + panel_h * k as f64);
    }
    s.push_str("</svg>\n");
    s
}

/// One group arena: each model in its own column band (its ops), its tensors at their
/// offsets in the group arena, its block (base to base + bytes) outlined.
fn group_panel(s: &mut String, group: &GroupPlanned, ga: &GroupArena, top: f64) {
    let arena = &ga.arena;
    let height = arena.used.max(1) as f64;
    let y0 = top + TITLE_H;
    let y_of = |offset: u64| y0 + PLOT_H - offset as f64 / height * PLOT_H;
    let users: Vec<String> = ga
        .users
        .iter()
        .filter_map(|u| {
            let m = group.models.get(u.model)?;
            Some(format!("{} {} B at {}", m.model, u.bytes, u.base))
        })
        .collect();
    let n = group.models.len().max(1);
    let band = PLOT_W / n as f64;
    // Each model's tensors in this arena, from its own arena record (rebased: same role and
    // memory as the group's); `None` for a model that does not use the arena.
    let model_bars: Vec<Option<Vec<Bar>>> = group
        .models
        .iter()
        .enumerate()
        .map(|(k, m)| {
            ga.users.iter().find(|u| u.model == k)?;
            let own = m
                .plan
                .arenas()
                .find(|a| a.role == arena.role && a.memory == arena.memory);
            Some(own.map(|own| bars(m, own)).unwrap_or_default())
        })
        .collect();
    let scratch = arena.role == ArenaRole::Scratch;
    // The op with the most live bytes in this arena over every model, the first on a tie:
    // (model, op, bytes).
    let peak_at = scratch
        .then(|| {
            model_bars
                .iter()
                .enumerate()
                .filter_map(|(k, b)| {
                    let (op, bytes) = peak(b.as_ref()?, group.models[k].ops.max(1));
                    Some((k, op, bytes))
                })
                .fold(None, |best: Option<(usize, u32, u64)>, c| match best {
                    Some(b) if b.2 >= c.2 => Some(b),
                    _ => Some(c),
                })
        })
        .flatten();
    let mut title = format!(
        "{} {}: {} bytes for {} (separate arenas: {} bytes)",
        arena.role.name(),
        arena.memory,
        arena.used,
        users.join(", "),
        ga.separate
    );
    if scratch {
        let _ = write!(title, "; lower bound {} bytes", ga.lower_bound);
    }
    if let Some((k, op, bytes)) = peak_at {
        let _ = write!(
            title,
            "; peak in model {} at op {op} ({bytes} bytes live)",
            group.models[k].model
        );
    }
    panel_head(s, "arena group-arena", arena, &title, top, y0);
    if let Some((k, op, bytes)) = peak_at {
        let col = band / f64::from(group.models[k].ops.max(1));
        let _ = writeln!(
            s,
            "<rect class=\"peak\" data-model=\"{}\" x=\"{:.2}\" y=\"{y0}\" width=\"{col:.2}\" height=\"{PLOT_H}\" fill=\"#ffeb3b\" fill-opacity=\"0.35\"><title>peak: model {} op {op}, {bytes} bytes live</title></rect>",
            esc(&group.models[k].model),
            LEFT + band * k as f64 + f64::from(op) * col,
            esc(&group.models[k].model),
        );
    }
    for (k, m) in group.models.iter().enumerate() {
        let x0 = LEFT + band * k as f64;
        let col = band / f64::from(m.ops.max(1));
        let user = ga.users.iter().find(|u| u.model == k);
        if let Some(u) = user {
            let top_y = y_of(u.base.saturating_add(u.bytes));
            let h = (y_of(u.base) - top_y).max(0.75);
            let _ = writeln!(
                s,
                "<rect class=\"block\" data-model=\"{}\" x=\"{x0:.2}\" y=\"{top_y:.2}\" width=\"{band:.2}\" height=\"{h:.2}\" fill=\"none\" stroke=\"#212121\" stroke-dasharray=\"4 3\"><title>model {}: {} bytes at {}</title></rect>",
                esc(&m.model),
                esc(&m.model),
                u.bytes,
                u.base
            );
            for b in model_bars[k].iter().flatten() {
                tensor_rect(s, m, b, (x0, col), &y_of);
            }
        }
        let _ = writeln!(
            s,
            "<text class=\"model\" x=\"{:.2}\" y=\"{:.2}\" text-anchor=\"middle\">{}{}</text>",
            x0 + band / 2.0,
            y0 + PLOT_H + 16.0,
            esc(&m.model),
            if user.is_some() { "" } else { " (not a user)" }
        );
        if k > 0 {
            let _ = writeln!(
                s,
                "<line x1=\"{x0:.2}\" y1=\"{y0}\" x2=\"{x0:.2}\" y2=\"{}\" stroke=\"#9e9e9e\"/>",
                y0 + PLOT_H
            );
        }
    }
    if scratch {
        let y = y_of(ga.lower_bound);
        let _ = writeln!(
            s,
            "<line class=\"lower-bound\" x1=\"{LEFT}\" y1=\"{y:.2}\" x2=\"{}\" y2=\"{y:.2}\" stroke=\"#c62828\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>lower bound: {} bytes</title></line>",
            LEFT + PLOT_W,
            ga.lower_bound
        );
    }
    for k in 0..=4u64 {
        let offset = if k == 4 {
            arena.used
        } else {
            arena.used / 4 * k
        };
        let y = y0 + PLOT_H - PLOT_H * k as f64 / 4.0;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{:.2}\" text-anchor=\"end\">{offset}</text>",
            LEFT - 6.0,
            y + 4.0
        );
    }
    s.push_str("</g>\n");
}

/// The picture of a CSV problem planned on its own items ([`crate::solve_problem`], the plan
/// `planner plan X.csv` prints): one panel, x the time step, y the offset, one rectangle per
/// buffer (`data-id` its id), the lower bound dashed and the peak step shaded, as a model's
/// scratch panel. Linear in buffers plus steps: a sweep finds the peak, and each buffer is
/// written once.
pub fn problem_svg(name: &str, csv: &CsvProblem, solved: &SolvedProblem) -> String {
    let items = &csv.problem.items;
    let steps = items.iter().map(|it| it.end.saturating_add(1)).max().unwrap_or(0);
    let bars: Vec<Bar> = items
        .iter()
        .enumerate()
        .map(|(i, it)| Bar {
            index: i,
            offset: solved.packing.offsets[i].unwrap_or(0),
            size: it.size,
            start: it.start,
            end: it.end,
            class: "activation",
            alias: false,
        })
        .collect();
    let panel_h = TITLE_H + PLOT_H + AXIS_H;
    let legend_h = 16.0;
    let width = LEFT + PLOT_W + 20.0;
    let height = legend_h + panel_h + 10.0;
    let mut s = String::with_capacity(230 * items.len() + 4096);
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(
        s,
        "<title>memory map of problem {} (planner {})</title>",
        esc(name),
        esc(&solved.planner)
    );
    let _ = writeln!(
        s,
        "<rect class=\"background\" x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    let used = solved.packing.height;
    let lower = solved.certificate.lower_bound;
    let ops = steps.max(1);
    let (peak_op, peak_bytes) = peak(&bars, ops);
    let y0 = legend_h + TITLE_H;
    let scale = used.max(1) as f64;
    let y_of = |offset: u64| y0 + PLOT_H - offset as f64 / scale * PLOT_H;
    let col = PLOT_W / f64::from(ops);
    let arena = ArenaUsage::new("MEM", ArenaRole::Scratch, "MEM", used, 1);
    let title = format!(
        "scratch MEM: {used} bytes, {} buffers over {steps} steps; lower bound {lower} bytes; peak at step {peak_op} ({peak_bytes} bytes live)",
        items.len()
    );
    panel_head(&mut s, "arena", &arena, &title, legend_h, y0);
    let _ = writeln!(
        s,
        "<rect class=\"peak\" x=\"{:.2}\" y=\"{y0}\" width=\"{:.2}\" height=\"{PLOT_H}\" fill=\"#ffeb3b\" fill-opacity=\"0.35\"><title>peak step {peak_op}: {peak_bytes} bytes live</title></rect>",
        LEFT + f64::from(peak_op) * col,
        col
    );
    let fill = colour("activation");
    for b in &bars {
        let x = LEFT + f64::from(b.start) * col;
        let w = (f64::from(b.end.saturating_sub(b.start)) + 1.0) * col;
        let top = y_of(b.offset.saturating_add(b.size));
        let h = (y_of(b.offset) - top).max(0.75);
        let id = esc(&csv.ids[b.index]);
        let _ = writeln!(
            s,
            "<rect class=\"tensor activation\" data-id=\"{id}\" x=\"{x:.2}\" y=\"{top:.2}\" width=\"{w:.2}\" height=\"{h:.2}\" fill=\"{fill}\" stroke=\"#ffffff\" stroke-width=\"0.5\"><title>{id}: {} bytes at offset {}, steps {}..{}</title></rect>",
            b.size,
            b.offset,
            b.start,
            u64::from(b.end) + 1,
        );
    }
    let y = y_of(lower);
    let _ = writeln!(
        s,
        "<line class=\"lower-bound\" x1=\"{LEFT}\" y1=\"{y:.2}\" x2=\"{}\" y2=\"{y:.2}\" stroke=\"#c62828\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>lower bound: {lower} bytes</title></line>",
        LEFT + PLOT_W,
    );
    axes(&mut s, used, ops, y0, col);
    s.push_str("</g>\n</svg>\n");
    s
}

fn legend(s: &mut String) {
    let mut x = LEFT;
    for (class, colour, text) in ROLES {
        let _ = writeln!(
            s,
            "<rect class=\"legend {class}\" x=\"{x}\" y=\"12\" width=\"14\" height=\"14\" fill=\"{colour}\"/><text x=\"{}\" y=\"24\">{text}</text>",
            x + 18.0
        );
        x += 24.0 + 7.0 * text.len() as f64;
    }
}

fn colour(class: &str) -> &'static str {
    ROLES
        .iter()
        .find(|(c, _, _)| *c == class)
        .map_or("#000000", |(_, colour, _)| colour)
}

fn panel(s: &mut String, planned: &Planned, arena: &ArenaUsage, top: f64) {
    let bars = bars(planned, arena);
    let ops = planned.ops.max(1);
    let height = arena.used.max(1) as f64;
    let col = PLOT_W / f64::from(ops);
    let y0 = top + TITLE_H;
    let y_of = |offset: u64| y0 + PLOT_H - offset as f64 / height * PLOT_H;
    let name = if arena.is_staged() {
        format!(
            "{} {} (staged from {})",
            arena.role.name(),
            arena.memory,
            arena.source_memory
        )
    } else {
        format!("{} {}", arena.role.name(), arena.memory)
    };
    let report = planned
        .scratch_reports
        .iter()
        .find(|r| arena.role == ArenaRole::Scratch && r.memory == arena.memory);
    let (peak_op, peak_bytes) = peak(&bars, ops);
    let mut title = format!(
        "{name}: {} bytes, {} tensors, aligned to {}",
        arena.used,
        bars.len(),
        arena.alignment
    );
    if let Some(r) = report {
        let _ = write!(
            title,
            "; lower bound {} bytes; peak at op {peak_op} ({peak_bytes} bytes live)",
            r.lower_bound
        );
    }
    panel_head(s, "arena", arena, &title, top, y0);
    if report.is_some() {
        let _ = writeln!(
            s,
            "<rect class=\"peak\" x=\"{:.2}\" y=\"{y0}\" width=\"{:.2}\" height=\"{PLOT_H}\" fill=\"#ffeb3b\" fill-opacity=\"0.35\"><title>peak op {peak_op}: {peak_bytes} bytes live</title></rect>",
            LEFT + f64::from(peak_op) * col,
            col
        );
    }
    subgraph_bands(s, &planned.graph, col, y0, false);
    for b in &bars {
        tensor_rect(s, planned, b, (LEFT, col), &y_of);
    }
    subgraph_bands(s, &planned.graph, col, y0, true);
    if let Some(r) = report {
        let y = y_of(r.lower_bound);
        let _ = writeln!(
            s,
            "<line class=\"lower-bound\" x1=\"{LEFT}\" y1=\"{y:.2}\" x2=\"{}\" y2=\"{y:.2}\" stroke=\"#c62828\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>lower bound: {} bytes</title></line>",
            LEFT + PLOT_W,
            r.lower_bound
        );
    }
    axes(s, arena.used, ops, y0, col);
    s.push_str("</g>\n");
}

/// For a model with control flow: each subgraph's op range as a band over the plot, what
/// runs it in its tooltip (`labels` false, drawn under the tensors), or its label (`then`,
/// `else`, `condition`, `body`, `init`) at its top (`labels` true, drawn over them).
fn subgraph_bands(s: &mut String, g: &Graph, col: f64, y0: f64, labels: bool) {
    for p in crate::report::control::parts(g) {
        let x = LEFT + f64::from(p.range.start) * col;
        let w = f64::from(p.range.end - p.range.start) * col;
        if labels {
            let _ = writeln!(
                s,
                "<text class=\"subgraph-label\" x=\"{:.2}\" y=\"{:.2}\" fill=\"#0d47a1\" font-size=\"10\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">{}</text>",
                x + 2.0,
                y0 + 11.0,
                p.label
            );
            continue;
        }
        let _ = writeln!(
            s,
            "<rect class=\"subgraph\" x=\"{x:.2}\" y=\"{y0}\" width=\"{w:.2}\" height=\"{PLOT_H}\" fill=\"#90caf9\" fill-opacity=\"0.15\" stroke=\"#1565c0\" stroke-dasharray=\"3 3\"><title>{} of the {}: ops {}..{}</title></rect>",
            p.label,
            esc(&p.owner),
            p.range.start,
            p.range.end
        );
    }
}

fn tensor_rect(
    s: &mut String,
    planned: &Planned,
    b: &Bar,
    (x0, col): (f64, f64),
    y_of: &dyn Fn(u64) -> f64,
) {
    let t = &planned.graph.tensors[b.index];
    let x = x0 + f64::from(b.start) * col;
    let w = (f64::from(b.end.saturating_sub(b.start)) + 1.0) * col;
    let top = y_of(b.offset.saturating_add(b.size));
    let h = (y_of(b.offset) - top).max(0.75);
    let stroke = if b.alias {
        "stroke=\"#000000\" stroke-dasharray=\"3 2\" fill-opacity=\"0.35\""
    } else {
        "stroke=\"#ffffff\" stroke-width=\"0.5\""
    };
    let alias = if b.alias {
        planned
            .graph
            .aliases
            .iter()
            .find(|(a, _)| a.get() == b.index)
            .map(|(_, target)| {
                format!(
                    ", alias of {}",
                    esc(&planned.graph.tensors[target.get()].id)
                )
            })
            .unwrap_or_default()
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "<rect class=\"tensor {}{}\" data-id=\"{}\" x=\"{x:.2}\" y=\"{top:.2}\" width=\"{w:.2}\" height=\"{h:.2}\" fill=\"{}\" {stroke}><title>{} {}: {} bytes at offset {}, ops {}..={}{alias}</title></rect>",
        b.class,
        if b.alias { " alias" } else { "" },
        esc(&t.id),
        colour(b.class),
        esc(&t.id),
        esc(&t.name),
        b.size,
        b.offset,
        b.start,
        b.end,
    );
}

fn axes(s: &mut String, used: u64, ops: u32, y0: f64, col: f64) {
    for k in 0..=4u64 {
        let offset = used / 4 * k;
        let offset = if k == 4 { used } else { offset };
        let y = y0 + PLOT_H - PLOT_H * k as f64 / 4.0;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{:.2}\" text-anchor=\"end\">{offset}</text>",
            LEFT - 6.0,
            y + 4.0
        );
    }
    let step = (u64::from(ops) / 12).max(1) as u32;
    let mut op = 0;
    while op < ops {
        let _ = writeln!(
            s,
            "<text x=\"{:.2}\" y=\"{:.2}\" text-anchor=\"middle\">{op}</text>",
            LEFT + (f64::from(op) + 0.5) * col,
            y0 + PLOT_H + 16.0
        );
        op += step;
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.2}\" y=\"{:.2}\" text-anchor=\"end\" fill=\"#616161\">op</text>",
        LEFT + PLOT_W,
        y0 + PLOT_H + 28.0
    );
}

/// An arena panel's opening: the `<g>` of class `class` (a model's arena or a group's), its
/// title and the plot's background, from `top` with the plot at `y0`.
fn panel_head(s: &mut String, class: &str, arena: &ArenaUsage, title: &str, top: f64, y0: f64) {
    let _ = writeln!(
        s,
        "<g class=\"{class}\" id=\"arena-{}-{}\">",
        arena.role.name(),
        esc(&arena.memory)
    );
    let _ = writeln!(
        s,
        "<text x=\"{LEFT}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        top + 26.0,
        esc(title)
    );
    let _ = writeln!(
        s,
        "<rect class=\"plot\" x=\"{LEFT}\" y=\"{y0}\" width=\"{PLOT_W}\" height=\"{PLOT_H}\" fill=\"#f5f5f5\" stroke=\"#9e9e9e\"/>"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_text_in_attributes_and_elements() {
        let names = [
            "</title><script>alert(1)</script>",
            "\" onload=\"x",
            "a'b&c;<!-- -->",
            "]]><![CDATA[",
            "x*\\\n/\u{1}\u{fffe}\u{ffff}é",
        ];
        for n in names {
            let doc = format!(
                "<svg><g id=\"{}\"><title>{}</title></g></svg>",
                esc(n),
                esc(n)
            );
            let parsed = roxmltree::Document::parse(&doc).unwrap_or_else(|e| panic!("{n:?}: {e}"));
            let g = parsed.root_element().first_element_child().unwrap();
            assert_eq!(g.attributes().count(), 1, "{doc}");
            assert_eq!(g.children().count(), 1, "{doc}");
            let title = g.first_element_child().unwrap().text().unwrap_or("");
            let shown: String = n
                .chars()
                .map(|c| match c {
                    '\t' => c,
                    c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => ' ',
                    c => c,
                })
                .collect();
            assert_eq!(title, shown);
        }
    }
}
