//! `planner compare`'s second table: every combination of the techniques that take a model
//! below the classic bound (in-place ops, row overlap, patches with the input resident or
//! streamed, the memory-minimising op order), each planned by the manifest's planner, with its scratch
//! bytes and its multiply-accumulates, the manifest's own combination marked.

use planner::Planned;
use planner::manifest::{Manifest, Schedule};
use planner::patch::{PatchMode, graph_macs, overhead_text};
use planner::patch_plan::PatchInput;

use super::input::{Input, plan_as};

/// How the first stage runs in one combination.
#[derive(Clone, Copy, PartialEq)]
enum Stage {
    /// Op by op, every tensor whole.
    Whole,
    /// Patch by patch, with the input in this form.
    Patches(PatchInput),
}

/// One combination of the techniques.
#[derive(Clone, Copy, PartialEq)]
struct Combination {
    in_place: bool,
    /// Row overlap (`memory.row_overlap`), which plans ops on whole tensors only.
    rows: bool,
    stage: Stage,
    schedule: Schedule,
}

impl Combination {
    /// The manifest's own combination.
    fn of(m: &Manifest) -> Combination {
        Combination {
            in_place: m.aliasing.in_place,
            rows: m.aliasing.row_overlap,
            stage: match m.patches.mode {
                PatchMode::Off => Stage::Whole,
                _ => Stage::Patches(m.patches.input),
            },
            schedule: m.schedule,
        }
    }

    /// Every combination, classic first.
    fn all() -> Vec<Combination> {
        let stages = [
            Stage::Whole,
            Stage::Patches(PatchInput::Resident),
            Stage::Patches(PatchInput::Streamed),
        ];
        let mut all = Vec::new();
        for schedule in [Schedule::Fixed, Schedule::Memory] {
            for stage in stages {
                let rows: &[bool] = if stage == Stage::Whole {
                    &[false, true]
                } else {
                    &[false]
                };
                for &rows in rows {
                    for in_place in [false, true] {
                        all.push(Combination {
                            in_place,
                            rows,
                            stage,
                            schedule,
                        });
                    }
                }
            }
        }
        all
    }

    /// `m` set to this combination. Patches keep the manifest's split and grid, or its
    /// `max_recompute` under `"auto"`; a manifest without patches gets `"auto"` at the
    /// default budget.
    fn manifest(self, m: &Manifest) -> Manifest {
        let mut m = m.clone();
        m.aliasing.in_place = self.in_place;
        m.aliasing.row_overlap = self.rows;
        m.schedule = self.schedule;
        match self.stage {
            Stage::Whole => m.patches.mode = PatchMode::Off,
            Stage::Patches(input) => {
                if m.patches.mode == PatchMode::Off {
                    m.patches.mode = PatchMode::Auto {
                        max_recompute: m
                            .patches
                            .max_recompute
                            .unwrap_or(planner::manifest::DEFAULT_MAX_RECOMPUTE),
                    };
                }
                m.patches.input = input;
                // A combination that finds no patch plan is shown as such, not refused.
                m.patches.required = false;
            }
        }
        m
    }

    /// "patches (input streamed), in place, schedule=memory".
    fn label(self) -> String {
        let mut parts = vec![match self.stage {
            Stage::Whole => "classic".to_string(),
            Stage::Patches(PatchInput::Resident) => "patches (input resident)".to_string(),
            Stage::Patches(PatchInput::Streamed) => "patches (input streamed)".to_string(),
        }];
        if self.in_place {
            parts.push("in place".into());
        }
        if self.rows {
            parts.push("row overlap".into());
        }
        if self.schedule == Schedule::Memory {
            parts.push("schedule=memory".into());
        }
        parts.join(", ")
    }
}

/// The techniques table of `inp` (a model, not a CSV problem): one row per combination, the
/// manifest's marked `*`.
pub(super) fn table(inp: &Input) -> Vec<Vec<String>> {
    let ours = Combination::of(&inp.manifest);
    let layers = graph_macs(&inp.graph);
    let mut rows = vec![
        ["", "technique", "scratch", "MACs", "extra MACs", "note"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    ];
    for c in Combination::all() {
        let mark = if c == ours { "*" } else { "" }.to_string();
        let row = match plan_as(inp, &c.manifest(&inp.manifest)) {
            Ok(p) => planned_row(c, &p, layers),
            Err(e) => vec![
                String::new(),
                String::new(),
                String::new(),
                format!("no plan: {}", e.message()),
            ],
        };
        let mut full = vec![mark, c.label()];
        full.extend(row);
        rows.push(full);
    }
    rows
}

/// Scratch bytes, MACs, extra MACs and a note for plan `p` of combination `c`. MACs count as
/// the patch search counts them (an op's taps, one per output element for other ops), on the
/// plan's graph: folded PADs copy nothing, so in-place plans can need fewer than `layers`,
/// the model's own op by op.
fn planned_row(c: Combination, p: &Planned, layers: u64) -> Vec<String> {
    let scratch: u64 = p.scratch_reports.iter().map(|r| r.used).sum();
    let (macs, note) = match (&p.graph.patches, c.stage) {
        (Some(plan), _) => (
            plan.patch_macs,
            format!(
                "split after op {}, grid {}x{}",
                plan.split, plan.grid[0], plan.grid[1]
            ),
        ),
        (None, Stage::Patches(_)) => (
            graph_macs(&p.graph),
            "no patch plan below the plan without patches: planned without".to_string(),
        ),
        (None, Stage::Whole) => (graph_macs(&p.graph), String::new()),
    };
    vec![
        scratch.to_string(),
        macs.to_string(),
        overhead_text(layers, macs),
        note,
    ]
}

/// The line under the table: which combination is lowest, and where the manifest's stands.
pub(super) fn summary(rows: &[Vec<String>]) -> String {
    let bytes = |r: &Vec<String>| r.get(2).and_then(|s| s.parse::<u64>().ok());
    let lowest = rows
        .iter()
        .skip(1)
        .filter_map(|r| Some((bytes(r)?, r)))
        .min_by_key(|(b, _)| *b);
    let ours = rows
        .iter()
        .skip(1)
        .find(|r| r.first().is_some_and(|m| m == "*"));
    match (lowest, ours.and_then(|r| Some((bytes(r)?, r)))) {
        (Some((low, _)), Some((b, r))) if b == low => format!(
            "\nThis manifest's combination (*) is the lowest: {b} bytes of scratch ({}).\n",
            r[1]
        ),
        (Some((low, l)), Some((b, _))) => format!(
            "\nThe lowest is {} at {low} bytes of scratch; this manifest's combination (*) needs {b} (memory.in_place, memory.row_overlap, memory.patches, memory.patch_input and memory.schedule choose one).\n",
            l[1]
        ),
        _ => String::new(),
    }
}
