//! `planner plan`: a model's, a group's or a CSV problem's plan as a table, JSON, CSV or SVG.

use std::path::Path;
use std::process::ExitCode;

use planner::manifest::{self, Schedule};
use planner::pack::PlannerKind;
use planner::{Error, Planned, ProblemOutcome, Solution, report};

use super::args::{Format, PlanArgs, is_problem, parse_capacity, parse_duration, usage};
use super::input::{
    Input, group_of, links, load, override_planner, plan, plan_as, plan_group, problem_manifest,
    refuse_in_place, set_time_limit,
};
use super::output::{eprint, print, warn};

/// `planner plan`.
pub(super) fn command(args: PlanArgs) -> Result<ExitCode, Error> {
    let PlanArgs {
        input,
        planner,
        format,
        capacity,
        node_budget,
        time_limit,
        target,
        run,
    } = args;
    refuse_in_place(&input, run.in_place)?;
    if let Some(mut g) = group_of(&input, planner.as_deref())? {
        run.patches.apply_group(&mut g)?;
        return plan_group_table(&g, &input, format, target.as_deref());
    }
    if is_problem(&input)? {
        return plan_problem_file(
            &input,
            planner.as_deref(),
            format,
            capacity.as_deref(),
            node_budget,
            time_limit.as_deref(),
        );
    }
    let mut inp = load(&input, capacity.as_deref())?;
    override_planner(&mut inp.manifest, planner.as_deref())?;
    run.apply(&input, &mut inp.manifest)?;
    if let Some(t) = &time_limit {
        set_time_limit(&mut inp.manifest, t)?;
    }
    if format == Format::Csv && inp.csv.is_none() {
        return Err(usage("--format csv is for CSV problems; use table or json"));
    }
    let planned = match (&inp.csv, capacity.as_deref()) {
        (Some(csv), Some(cap)) => {
            let cap = parse_capacity(cap)?;
            match planner::plan_problem(
                csv,
                &inp.manifest.name,
                &inp.manifest.planner,
                Some(cap),
                node_budget,
            )? {
                ProblemOutcome::Planned(p) => *p,
                ProblemOutcome::DoesNotFit {
                    best_height,
                    proven,
                } => {
                    let stop = Stop {
                        nodes: node_budget,
                        time: None,
                    };
                    return Ok(does_not_fit(&input, cap, stop, best_height, proven));
                }
            }
        }
        _ => plan(&inp)?,
    };
    warn(&planned);
    if inp.csv.is_none() {
        let file = crate::generate(&inp.manifest, &planned, &crate::Options::default())?;
        links(
            file.plan.arenas.iter(),
            &format!("model {}", inp.manifest.name),
            &input,
            target.as_deref(),
        )?;
    }
    let state = time_limit.as_ref().map(|t| certificate_state(&planned, t));
    if let (Some(state), false) = (&state, format == Format::Table) {
        eprint(state);
    }
    let out = match format {
        Format::Table => {
            report::table(&planned, &planned.graph)
                + &report::order_summary(&planned, inp.manifest.platform.min_alignment)
                + &schedule_hint(&inp, &planned, &input)
                + state.as_deref().unwrap_or("")
        }
        Format::Json => report::json(&planned) + "\n",
        Format::Csv => csv_out(&inp, &planned),
        Format::Svg => planner::export::svg::svg(&planned),
    };
    print(&out);
    Ok(ExitCode::SUCCESS)
}

/// `planner plan` on a group manifest, once the plan is known to link: the group table, or
/// the group as JSON (each arena with its users, then every model's plan), CSV (one row per
/// arena user) or SVG (the group's arenas, models side by side).
fn plan_group_table(
    g: &manifest::Group,
    input: &Path,
    format: Format,
    target: Option<&str>,
) -> Result<ExitCode, Error> {
    let planned = plan_group(g)?;
    let file = crate::generate_group(g, &planned, &crate::Options::default())?;
    links(
        file.plan.arenas.iter().map(|a| &a.arena),
        &format!("group {}", g.name),
        input,
        target,
    )?;
    print(&match format {
        Format::Table => planner::report::group_table(&planned),
        Format::Json => planner::report::group_json(&planned),
        Format::Csv => planner::report::group_csv(&planned),
        Format::Svg => planner::export::svg::group_svg(&planned),
    });
    Ok(ExitCode::SUCCESS)
}

/// `planner plan X.csv`: the problem planned on its own items ([`planner::solve_problem`]:
/// 64-bit heights, no arena cap, no model pipeline), reported as a table, JSON or CSV.
fn plan_problem_file(
    input: &Path,
    planner: Option<&str>,
    format: Format,
    capacity: Option<&str>,
    node_budget: u64,
    time_limit: Option<&str>,
) -> Result<ExitCode, Error> {
    let csv = planner::import::csv::read(input)?;
    // A manifest only carries the name and the planner here.
    let mut m = problem_manifest(input, planner)?;
    let cap = capacity.map(parse_capacity).transpose()?;
    // Under a capacity, --time-limit is also the exact search's stop (`none`: the node
    // budget alone, the same answer on every machine); without it, a safety stop.
    let search_time = match time_limit {
        None => Some(planner::DEFAULT_SEARCH_TIME),
        Some("none") if cap.is_some() => None,
        Some(t) => {
            let d = parse_duration(t).ok_or_else(|| {
                usage(&format!(
                    "--time-limit {t:?} is not a duration; write a number with ms, s or m (\"500ms\", \"5s\"), or none with --capacity"
                ))
            })?;
            if cap.is_none() || matches!(m.planner, PlannerKind::Auto(_) | PlannerKind::Optimal(_))
            {
                set_time_limit(&mut m, t)?;
            }
            Some(d)
        }
    };
    let solved =
        match planner::solve_problem_within(&csv, &m.planner, cap, node_budget, search_time)? {
            Solution::Solved(s) => s,
            Solution::DoesNotFit {
                best_height,
                proven,
                timed_out,
            } => {
                let cap = cap.unwrap_or(0);
                let stop = Stop {
                    nodes: node_budget,
                    time: timed_out.then_some(search_time).flatten(),
                };
                return Ok(does_not_fit(input, cap, stop, best_height, proven));
            }
        };
    let state = time_limit.map(|t| {
        let c = &solved.certificate;
        let line = if c.optimal {
            "MEM: at the lower bound (optimal)".to_string()
        } else {
            format!(
                "MEM: {} bytes above the lower bound {} (ratio {:.6})",
                c.gap(),
                c.lower_bound,
                c.ratio()
            )
        };
        format!("time limit {t}: {line}\n")
    });
    if let (Some(state), false) = (&state, format == Format::Table) {
        eprint(state);
    }
    let out = match format {
        Format::Json => report::problem_json(&m.name, &csv, &solved) + "\n",
        Format::Csv => planner::import::csv::write(&csv, &solved.packing),
        Format::Svg => planner::export::svg::problem_svg(&m.name, &csv, &solved),
        Format::Table => {
            report::problem_table(&m.name, &csv, &solved) + state.as_deref().unwrap_or("")
        }
    };
    print(&out);
    Ok(ExitCode::SUCCESS)
}

/// A CSV problem that does not fit under `--capacity`: why, on standard error, and exit
/// code 1.
/// Where an unproven search stopped: its node budget, or its time limit when that came first.
struct Stop {
    nodes: u64,
    time: Option<std::time::Duration>,
}

fn does_not_fit(input: &Path, cap: u64, stop: Stop, best_height: u64, proven: bool) -> ExitCode {
    let node_budget = stop.nodes;
    if let (false, Some(t)) = (proven, stop.time) {
        eprint(&format!(
            "error: no placement of {} below {cap} bytes was found before the exact search's time limit ({:.1} s, before its {node_budget}-node budget: another machine may search further); the best height found is {best_height}; raise --capacity, or --time-limit (none: the node budget alone, the same answer everywhere)\n",
            input.display(),
            t.as_secs_f64()
        ));
        return ExitCode::from(1);
    }
    if proven {
        eprint(&format!(
            "error: {} does not fit below {cap} bytes: the exact search proved that no placement does; the best height found is {best_height}\n",
            input.display()
        ));
    } else {
        eprint(&format!(
            "error: no placement of {} below {cap} bytes was found within {node_budget} search nodes; the best height found is {best_height}; raise --node-budget or --capacity\n",
            input.display()
        ));
    }
    ExitCode::from(1)
}

/// Where a plan made under `--time-limit` stands: per scratch arena, at the lower bound or
/// how far above it.
fn certificate_state(planned: &Planned, limit: &str) -> String {
    let mut s = String::new();
    for r in &planned.scratch_reports {
        let line = if r.optimal {
            format!("{}: at the lower bound (optimal)", r.memory)
        } else {
            let ratio = r.used as f64 / r.lower_bound.max(1) as f64;
            format!(
                "{}: {} bytes above the lower bound {} (ratio {ratio:.6})",
                r.memory,
                r.used.saturating_sub(r.lower_bound),
                r.lower_bound
            )
        };
        s.push_str(&format!("time limit {limit}: {line}\n"));
    }
    s
}

fn csv_out(inp: &Input, planned: &Planned) -> String {
    let Some(csv) = &inp.csv else {
        return String::new();
    };
    let offsets: Vec<Option<u64>> = csv
        .ids
        .iter()
        .map(|id| planned.plan.tensor_allocs.get(id).map(|a| a.offset))
        .collect();
    let height = planned.plan.arena_usages.get("MEM").map_or(0, |a| a.used);
    planner::import::csv::write(csv, &planner::pack::Packing { offsets, height })
}

/// When the manifest keeps the model's op order and `schedule = "memory"` would plan the
/// model in fewer scratch bytes: the bytes it would save and the manifest line to add. The
/// order stays the model's by default: another order runs the same ops on the same inputs,
/// but ops with effects outside their tensors (variables read and assigned by name, custom
/// ops, kernels' own state) and per-op tooling (profiles, hooks, `export tflm`, which TFLM
/// runs in the file's order) depend on it.
fn schedule_hint(inp: &Input, planned: &Planned, input: &Path) -> String {
    if inp.manifest.schedule != Schedule::Fixed || inp.csv.is_some() {
        return String::new();
    }
    let mut m = inp.manifest.clone();
    m.schedule = Schedule::Memory;
    let Ok(reordered) = plan_as(inp, &m) else {
        return String::new();
    };
    let bytes = |p: &Planned| p.scratch_reports.iter().map(|r| r.used).sum::<u64>();
    let (now, then) = (bytes(planned), bytes(&reordered));
    if then >= now {
        return String::new();
    }
    let moved = planner::schedule::moved(&reordered.order).len();
    let line = "schedule = \"memory\"";
    let how = if inp.manifest.path == Path::new("<generated>") {
        format!(
            "write a manifest (`planner import {} -o model.toml`) and add `{line}` to its [memory] table",
            input.display()
        )
    } else {
        format!(
            "add `{line}` to the [memory] table of {}",
            inp.manifest.path.display()
        )
    };
    format!(
        "schedule: {line} would plan scratch in {then} bytes instead of {now} ({} bytes less, {moved} ops moved); {how}. It runs the same ops in another order that respects every tensor's producer; check that no op depends on the model's order (variables, custom ops)\n",
        now - then
    )
}
