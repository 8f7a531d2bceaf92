//! `planner compare`: every planner side by side, the manifest's planner with the other op
//! order and with in-place planning toggled, and (for a model, in the table format) every
//! combination of the techniques below the classic bound ([`techniques`]).

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use planner::manifest::{self, Manifest, Schedule};
use planner::pack::{PlannerKind, SEARCH_CHAIN};
use planner::{Error, Planned};

use super::args::{CompareArgs, Format, is_problem, parse_capacity, parse_duration, usage};
use super::input::{
    Input, group_of, load, plan, plan_as, problem_manifest, refuse_in_place, solve_csv,
};
use super::output::{print, rows_as};
use super::techniques;

/// `planner compare`: every planner side by side, for a group, a model or a CSV problem.
pub(super) fn command(args: CompareArgs) -> Result<ExitCode, Error> {
    let started = Instant::now();
    let CompareArgs {
        input,
        capacity,
        format,
        in_place,
        time_limit,
    } = args;
    let (input, capacity) = (input.as_path(), capacity.as_deref());
    refuse_in_place(input, in_place)?;
    format.refuse_svg("compare")?;
    let limit = match time_limit.as_deref() {
        None => Some(DEFAULT_TIME_LIMIT),
        Some("none") => None,
        Some(t) => Some(parse_duration(t).ok_or_else(|| {
            usage(&format!(
                "--time-limit {t:?} is not a duration; write a number with ms, s or m (\"500ms\", \"20s\"), or none"
            ))
        })?),
    };
    if time_limit.is_some() && !is_problem(input)? {
        return Err(usage(
            "--time-limit is for CSV problems; a model's or a group's planners take milliseconds, so compare runs each to its own budget",
        ));
    }
    if let Some(g) = group_of(input, None)? {
        if capacity.is_some() {
            return Err(usage(
                "--capacity is for CSV problems; a group manifest sets budgets with memory.constraints",
            ));
        }
        print(&compare_group(&g, format)?);
        return Ok(ExitCode::SUCCESS);
    }
    if is_problem(input)? {
        let capacity = capacity.map(parse_capacity).transpose()?;
        let deadline = limit.map(|l| (started + l, l));
        print(&compare_problem(input, capacity, format, deadline)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut inp = load(input, capacity)?;
    inp.manifest.aliasing.in_place |= in_place;
    print(&compare(&inp, format)?);
    Ok(ExitCode::SUCCESS)
}

fn compare(inp: &Input, format: Format) -> Result<String, Error> {
    let mut rows = vec![header(COLUMNS)];
    let mut m = inp.manifest.clone();
    for name in PlannerKind::NAMES {
        m.planner = PlannerKind::from_name(name, &BTreeMap::new())
            .map_err(|e| Error::invalid_input(&e.message))?;
        let (result, took) = timed(|| plan_as(inp, &m));
        rows.extend(scratch_rows(name, result, &millis(took)));
    }
    if inp.problem.is_none() {
        rows.extend(reordered_rows(inp));
        rows.extend(in_place_rows(inp));
    }
    if format != Format::Table {
        return Ok(rows_as(format, &rows));
    }
    let title = format!(
        "model {} · {} ops · {} tensors",
        inp.manifest.name,
        inp.graph.ops.len(),
        inp.graph.tensors.len()
    );
    let mut out = aligned(&title, &rows) + &tflm_line(inp);
    if inp.problem.is_none() {
        let combos = techniques::table(inp);
        let title = format!(
            "every combination of techniques, planner `{}` (* this manifest's)",
            inp.manifest.planner.name()
        );
        out.push('\n');
        out.push_str(&aligned(&title, &combos));
        out.push_str(&techniques::summary(&combos));
    }
    Ok(out)
}

/// The columns of a compare table, for a model and for a CSV problem.
const COLUMNS: [&str; 7] = [
    "planner",
    "memory",
    "used",
    "lower bound",
    "ratio",
    "optimal",
    "time",
];

/// A run shorter than this is repeated, best of three, so a cold first run does not decide
/// the figure; a longer one (a CSV problem of 10^6 rows) runs once.
const REPEAT_BELOW: Duration = Duration::from_millis(200);

/// Runs `run` and times it: best of three runs, so a cold first run does not decide the
/// figure, or once when it takes [`REPEAT_BELOW`] or more. The last run's result.
fn timed<T>(mut run: impl FnMut() -> T) -> (T, Duration) {
    let start = Instant::now();
    let mut result = run();
    let mut took = start.elapsed();
    for _ in 1..3 {
        if took >= REPEAT_BELOW {
            break;
        }
        let start = Instant::now();
        result = run();
        took = took.min(start.elapsed());
    }
    (result, took)
}

/// How long `compare` on a CSV problem may take without `--time-limit`. On 10^6 rows shaped
/// like real traces every planner run to its own budget took 53 to 109 s; the searches now
/// stop at their shares of this, so the table comes within about this time plus what the
/// single passes take past it on a slower machine.
const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(20);

/// `compare` for a CSV problem: every planner on the problem's own items, as `planner plan
/// X.csv` plans it ([`planner::solve_problem`], no model pipeline: on 10^6 rows that took
/// past 300 s and 3.7 GB), the height against the problem's lower bound.
/// With a `capacity`, the table ends with the planners whose height fits under it.
///
/// Under a `deadline` (the instant, and the limit it came from), the planners that make one
/// pass run first, then the search chain ([`search_chain`]) and the planners that take a time
/// limit (`auto`), each search with an equal share of the time left when it starts; a row
/// whose search was cut says so, and the chain is not run (its rows say so) when less time
/// is left than its uncut first pass would take.
fn compare_problem(
    input: &std::path::Path,
    capacity: Option<u64>,
    format: Format,
    deadline: Option<(Instant, Duration)>,
) -> Result<String, Error> {
    let csv = planner::import::csv::read(input)?;
    let Runs {
        mut results,
        not_run,
        pass,
    } = run_planners(input, &csv, deadline.map(|(d, _)| d))?;
    let mut rows = vec![header(COLUMNS)];
    let mut heights = BTreeMap::new();
    // The problem's lower bound, as every planner's certificate gives it.
    let mut bound = None;
    let mut cut = false;
    for name in PlannerKind::NAMES {
        let Some((_, result, took)) = results.remove(name) else {
            if not_run.contains(name) {
                let why = "not run: too little of the time limit was left";
                rows.push(message_row(name, why, ""));
            }
            continue;
        };
        let mut took = millis(took);
        match result {
            Ok(s) => {
                let c = &s.certificate;
                heights.insert(*name, c.height);
                bound = Some(c.lower_bound);
                if s.stats.timed_out {
                    cut = true;
                    took.push_str(" (cut)");
                }
                rows.push(vec![
                    name.to_string(),
                    "MEM".into(),
                    c.height.to_string(),
                    c.lower_bound.to_string(),
                    format!("{:.4}", ratio(c.height, c.lower_bound)),
                    if c.optimal { "yes" } else { "-" }.to_string(),
                    took,
                ]);
            }
            Err(e) => rows.push(failed_row_text(name, &e, &took)),
        }
    }
    if format != Format::Table {
        return Ok(rows_as(format, &rows));
    }
    let name = problem_manifest(input, None)?.name;
    let steps = csv
        .problem
        .items
        .iter()
        .map(|it| u64::from(it.end) + 1)
        .max()
        .unwrap_or(0);
    let title = format!("problem {name} · {} buffers · {steps} steps", csv.ids.len());
    let ours = PlannerKind::default();
    let mut line = match (heights.get("tflm"), heights.get(ours.name())) {
        (Some(t), Some(o)) => format!(
            "\nTFLM would need {t} bytes here (GreedyMemoryPlanner, planner `tflm`); planner `{}` (the default) needs {o}.\n",
            ours.name()
        ),
        _ => String::new(),
    };
    if let (true, Some((_, limit))) = (cut, deadline) {
        line.push_str(&format!(
            "(cut): the search stopped at its share of compare's time limit ({:.1} s) with the best height found by then; --time-limit none runs every planner to its own budget.\n",
            limit.as_secs_f64()
        ));
    }
    if let (false, Some((_, limit))) = (not_run.is_empty(), deadline) {
        line.push_str(&format!(
            "not run: {} would have started with less of compare's time limit ({:.1} s) left than their first pass takes (about {:.1} s here, which no limit cuts); --time-limit none runs every planner.\n",
            not_run.join(", "),
            limit.as_secs_f64(),
            pass.as_secs_f64()
        ));
    }
    if let Some(cap) = capacity {
        let fit: Vec<&str> = PlannerKind::NAMES
            .iter()
            .copied()
            .filter(|n| heights.get(n).is_some_and(|&h| h <= cap))
            .collect();
        let fit = if fit.is_empty() {
            "none".to_string()
        } else {
            fit.join(", ")
        };
        match bound {
            Some(b) if cap < b => line.push_str(&format!(
                "capacity {cap}: under the lower bound {b} (the most bytes live at one step), so no packing fits.\n"
            )),
            _ => line.push_str(&format!(
                "capacity {cap}: under it {fit}; `planner plan {} --capacity {cap}` searches below it when no heuristic fits.\n",
                input.display()
            )),
        }
    }
    Ok(aligned(&title, &rows) + &line)
}

/// What [`run_planners`] ran: each planner's packing or why it failed and its time, the
/// planners not run for lack of time, and the longest one-pass planner's time.
struct Runs {
    results: BTreeMap<&'static str, Chained>,
    not_run: Vec<&'static str>,
    pass: Duration,
}

/// Every planner on `csv` in [`compare_problem`]'s order: the one-pass planners side by
/// side, then the search chain (when there is time for its first pass before `at`), then
/// the planners that take a time limit, with what is left.
fn run_planners(
    input: &std::path::Path,
    csv: &planner::import::csv::CsvProblem,
    at: Option<Instant>,
) -> Result<Runs, Error> {
    let mut results: BTreeMap<&'static str, Chained> = BTreeMap::new();
    // The planners that take a time limit, run last with what is left; the others make one
    // pass each.
    let (mut limited, mut single) = (Vec::new(), Vec::new());
    for name in PlannerKind::NAMES {
        if SEARCH_CHAIN.contains(name) {
            continue;
        }
        let m = problem_manifest(input, Some(name))?;
        if matches!(m.planner, PlannerKind::Auto(_)) {
            limited.push((*name, m));
        } else {
            single.push((*name, m));
        }
    }
    for c in single_passes(csv, &single) {
        results.insert(c.0, c);
    }
    // The chain starts with a pass over the whole problem that no limit cuts, about as long
    // as the longest of theirs: with less time left than that it is not run. `auto` always
    // runs (the default planner's row; a decomposed problem's first passes are its parts').
    let pass = results.values().map(|c| c.2).max().unwrap_or_default();
    let room = || at.is_none_or(|d| d.saturating_duration_since(Instant::now()) >= pass);
    let mut not_run: Vec<&'static str> = Vec::new();
    // Three searches in the chain, one per planner after it: each gets its share.
    let searches = 3 + limited.len() as u32;
    let chain_until = at.map(|d| share_of(d, 3, searches));
    if room() {
        for c in search_chain(csv, chain_until) {
            results.insert(c.0, c);
        }
    } else {
        not_run.extend(SEARCH_CHAIN);
    }
    let after = limited.len() as u32;
    for (k, (name, mut m)) in limited.into_iter().enumerate() {
        if let (PlannerKind::Auto(o), Some(d)) = (&mut m.planner, at) {
            let until = share_of(d, 1, after - k as u32);
            o.time_limit = Some(until.saturating_duration_since(Instant::now()));
        }
        let (result, took) = timed(|| solve_csv(csv, &m.planner));
        results.insert(
            name,
            (name, result.map_err(|e| e.message().to_string()), took),
        );
    }
    Ok(Runs {
        results,
        not_run,
        pass,
    })
}

/// A planner of the search chain: its name, its packing or why it failed, and its time.
type Chained = (
    &'static str,
    Result<planner::SolvedProblem, String>,
    Duration,
);

/// The search chain on `csv` ([`planner::solve_problem_chain`], the planners of
/// [`SEARCH_CHAIN`], its searches stopping by `deadline`): each planner's packing and the
/// time it alone takes, the least of three runs when the chain takes less than
/// [`REPEAT_BELOW`] (as [`timed`]).
fn search_chain(csv: &planner::import::csv::CsvProblem, deadline: Option<Instant>) -> Vec<Chained> {
    let mut best: Option<[(planner::SolvedProblem, Duration); 4]> = None;
    for _ in 0..3 {
        let run = match planner::solve_problem_chain(csv, deadline) {
            Ok(run) => run,
            Err(e) => {
                let why = e.message().to_string();
                return SEARCH_CHAIN
                    .iter()
                    .map(|&n| (n, Err(why.clone()), Duration::ZERO))
                    .collect();
            }
        };
        let slow = run.iter().any(|(_, took)| *took >= REPEAT_BELOW);
        best = Some(match best {
            // The last run's packings (the same each run), each stage's least time.
            Some(before) => {
                let mut run = run;
                for (now, (_, took)) in run.iter_mut().zip(before) {
                    now.1 = now.1.min(took);
                }
                run
            }
            None => run,
        });
        if slow {
            break;
        }
    }
    best.into_iter()
        .flatten()
        .zip(SEARCH_CHAIN)
        .map(|((solved, took), name)| (name, Ok(solved), took))
        .collect()
}

/// The planners of `single` (one pass each, on one thread each) on `csv`, side by side on
/// the cores (on 10^6 rows `greedy` and `tflm` take 4 to 5 s each, a quarter of compare's
/// default time limit): each one's packing or why it failed, and its time as [`timed`]
/// gives it (taken while the others run).
fn single_passes(
    csv: &planner::import::csv::CsvProblem,
    single: &[(&'static str, Manifest)],
) -> Vec<Chained> {
    let run = |(name, m): &(&'static str, Manifest)| -> Chained {
        let (result, took) = timed(|| solve_csv(csv, &m.planner));
        (name, result.map_err(|e| e.message().to_string()), took)
    };
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let mut out = Vec::new();
    for batch in single.chunks(threads.max(1)) {
        let Some((first, others)) = batch.split_first() else {
            continue;
        };
        std::thread::scope(|s| {
            // A thread that could not start leaves its planner to this one.
            let handles: Vec<_> = others
                .iter()
                .map(|p| {
                    let h = std::thread::Builder::new().spawn_scoped(s, move || run(p));
                    (p, h.ok())
                })
                .collect();
            out.push(run(first));
            for (p, h) in handles {
                // A planner that panicked on its thread is run again here.
                out.push(h.and_then(|h| h.join().ok()).unwrap_or_else(|| run(p)));
            }
        });
    }
    out
}

/// The instant `parts` of `of` equal shares of the time left before `deadline` from now.
fn share_of(deadline: Instant, parts: u32, of: u32) -> Instant {
    let now = Instant::now();
    now + deadline.saturating_duration_since(now) * parts / of.max(1)
}

/// The header row of a compare table.
fn header(names: [&str; 7]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// `used / lower_bound`, 1 when the bound is 0.
fn ratio(used: u64, lower_bound: u64) -> f64 {
    if lower_bound == 0 {
        1.0
    } else {
        used as f64 / lower_bound as f64
    }
}

/// A time as the tables print it: `12.345 ms`.
fn millis(took: Duration) -> String {
    format!("{:.3} ms", took.as_secs_f64() * 1e3)
}

/// The row saying why planner `label` found no plan.
fn failed_row(label: &str, e: &Error, took: &str) -> Vec<String> {
    failed_row_text(label, e.message(), took)
}

/// [`failed_row`] from the error's message.
fn failed_row_text(label: &str, why: &str, took: &str) -> Vec<String> {
    message_row(label, &format!("failed: {why}"), took)
}

/// A row of `label` with `text` where its bytes would be, and its time.
fn message_row(label: &str, text: &str, took: &str) -> Vec<String> {
    vec![
        label.to_string(),
        "-".into(),
        text.to_string(),
        String::new(),
        String::new(),
        String::new(),
        took.to_string(),
    ]
}

/// One row per scratch memory of a plan made by `label` (a planner, or the manifest's
/// planner with a variant), or the row saying why it did not plan.
fn scratch_rows(label: &str, result: Result<Planned, Error>, took: &str) -> Vec<Vec<String>> {
    match result {
        Ok(p) => p
            .scratch_reports
            .iter()
            .map(|r| {
                vec![
                    label.to_string(),
                    r.memory.clone(),
                    r.used.to_string(),
                    r.lower_bound.to_string(),
                    format!("{:.4}", ratio(r.used, r.lower_bound)),
                    if r.optimal { "yes" } else { "-" }.to_string(),
                    took.to_string(),
                ]
            })
            .collect(),
        Err(e) => vec![failed_row(label, &e, took)],
    }
}

/// `title`, a blank line, then the rows with their columns aligned.
fn aligned(title: &str, rows: &[Vec<String>]) -> String {
    let mut widths = vec![0usize; rows.first().map_or(0, Vec::len)];
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut s = format!("{title}\n\n");
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, &w)| format!("{c:<w$}"))
            .collect();
        s.push_str(line.join("  ").trim_end());
        s.push('\n');
    }
    s
}

/// `compare` for a group: every planner plans every model of the group, and each row is one
/// of the group's arenas.
fn compare_group(g: &manifest::Group, format: Format) -> Result<String, Error> {
    let mut rows = vec![header([
        "planner",
        "arena",
        "used",
        "separate",
        "lower bound",
        "ratio",
        "time",
    ])];
    for name in PlannerKind::NAMES {
        let mut g = g.clone();
        let kind = PlannerKind::from_name(name, &BTreeMap::new())
            .map_err(|e| Error::invalid_input(&e.message))?;
        for m in &mut g.models {
            m.planner = kind.clone();
        }
        let start = Instant::now();
        let result = planner::plan_group(&g);
        let took = millis(start.elapsed());
        match result {
            Ok(p) => {
                for a in &p.arenas {
                    rows.push(vec![
                        name.to_string(),
                        format!("{} {}", a.arena.role.name(), a.arena.memory),
                        a.arena.used.to_string(),
                        a.separate.to_string(),
                        a.lower_bound.to_string(),
                        format!("{:.4}", ratio(a.arena.used, a.lower_bound)),
                        took.clone(),
                    ]);
                }
            }
            Err(e) => rows.push(failed_row(name, &e, &took)),
        }
    }
    if format != Format::Table {
        return Ok(rows_as(format, &rows));
    }
    let names: Vec<&str> = g.models.iter().map(|m| m.name.as_str()).collect();
    let title = planner::report::group_title(&g.name, &names, " ·");
    Ok(aligned(&title, &rows))
}

/// "TFLM would need X bytes here": the `tflm` planner's scratch bytes beside the manifest
/// planner's.
fn tflm_line(inp: &Input) -> String {
    let bytes = |r: Result<Planned, Error>| {
        r.map(|p| p.scratch_reports.iter().map(|r| r.used).sum::<u64>())
    };
    let mut m = inp.manifest.clone();
    m.planner = PlannerKind::Tflm;
    let tflm = match bytes(plan_as(inp, &m)) {
        Ok(b) => format!("TFLM would need {b} bytes of scratch here"),
        Err(e) => format!("TFLM's planner finds no plan here ({})", e.message()),
    };
    let name = inp.manifest.planner.name();
    let ours = match bytes(plan(inp)) {
        Ok(b) => format!("planner `{name}` (this manifest's) needs {b}"),
        Err(e) => format!(
            "planner `{name}` (this manifest's) finds no plan ({})",
            e.message()
        ),
    };
    format!(
        "\n{tflm} (GreedyMemoryPlanner, planner `tflm`; kernel scratch buffers not counted); {ours}.\n"
    )
}

/// Rows for the manifest's planner with the other op order (`schedule = "memory"` when the
/// manifest keeps the model's order, the model's order when it asks for memory).
fn reordered_rows(inp: &Input) -> Vec<Vec<String>> {
    let mut m = inp.manifest.clone();
    let label = match m.schedule {
        Schedule::Fixed => {
            m.schedule = Schedule::Memory;
            format!("{} schedule=memory", m.planner.name())
        }
        Schedule::Memory => {
            m.schedule = Schedule::Fixed;
            format!("{} schedule=fixed", m.planner.name())
        }
    };
    variant_rows(inp, &m, label)
}

/// Rows for the manifest's planner with in-place planning toggled (`in_place=true` when the
/// manifest plans classically, `in_place=false`, the classic plan, when it runs in place).
fn in_place_rows(inp: &Input) -> Vec<Vec<String>> {
    let mut m = inp.manifest.clone();
    m.aliasing.in_place = !m.aliasing.in_place;
    let label = format!("{} in_place={}", m.planner.name(), m.aliasing.in_place);
    variant_rows(inp, &m, label)
}

/// The compare rows of manifest `m` (a variant of the input's), one per scratch memory,
/// labelled `label`; one row saying why when it does not plan.
fn variant_rows(inp: &Input, m: &Manifest, label: String) -> Vec<Vec<String>> {
    let start = Instant::now();
    let result = plan_as(inp, m);
    scratch_rows(&label, result, &millis(start.elapsed()))
}
