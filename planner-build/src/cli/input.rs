//! Reading what a command is given: a manifest (one model or a group), a model or a CSV
//! problem, with the command line's overrides, and planning it.

use std::collections::BTreeMap;
use std::path::Path;

use planner::graph::Graph;
use planner::import::FormatKind;
use planner::manifest::{self, Manifest};
use planner::pack::PlannerKind;
use planner::{Error, Planned};

use super::args::{is_problem, parse_duration, usage};
use super::output::{eprint, warn};

/// A loaded input: what to plan and how.
pub(super) struct Input {
    pub(super) manifest: Manifest,
    pub(super) graph: Graph,
    /// The problem with its own lifetimes and fixed offsets, for CSV inputs.
    pub(super) problem: Option<planner::ProblemInput>,
    /// The problem, for CSV inputs.
    pub(super) csv: Option<planner::import::csv::CsvProblem>,
}

pub(super) fn load(path: &Path, capacity: Option<&str>) -> Result<Input, Error> {
    if path.is_dir() {
        return Err(directory_hint(path));
    }
    let format = planner::import::format_of(path)?;
    if capacity.is_some() && !matches!(format.kind, FormatKind::Problem) {
        return Err(Error::invalid_input(
            "--capacity is for CSV problems; a manifest sets budgets with memory.constraints",
        ));
    }
    let manifest = match format.kind {
        FormatKind::Manifest => manifest::load(path)?,
        FormatKind::Problem => {
            let csv = planner::import::csv::read(path)?;
            let name = manifest::sanitize_name(
                &path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            );
            let problem = planner::problem_input(&csv, &name, &PlannerKind::default());
            return Ok(Input {
                manifest: problem.manifest.clone(),
                graph: problem.graph.clone(),
                problem: Some(problem),
                csv: Some(csv),
            });
        }
        _ => Manifest::for_model_file(path),
    };
    let graph = planner::import::load(&manifest)?;
    Ok(Input {
        manifest,
        graph,
        problem: None,
        csv: None,
    })
}

/// The error for a directory given as the input: the inputs it holds, if any.
pub(super) fn directory_hint(dir: &Path) -> Error {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .is_some_and(|e| ["toml", "tflite", "csv"].contains(&&*e.to_string_lossy()))
        })
        .map(|p| p.display().to_string())
        .collect();
    found.sort();
    let hint = match found.len() {
        0 => "it holds no .toml, .tflite or .csv file".to_string(),
        n if n <= 5 => format!("it holds: {}", found.join(", ")),
        n => format!("it holds {n} inputs, such as {}", found[..5].join(", ")),
    };
    Error::invalid_input(format!(
        "{} is a directory; give a manifest (.toml), a model (.tflite) or a problem (.csv) file: {hint}",
        dir.display()
    ))
}

/// The manifest a CSV problem plans under, as `planner plan X.csv` plans it: only its name
/// (the file stem) and its planner (`auto` unless `planner` names another; heights run to
/// gigabytes, so `auto` calls a part within a millionth of the bound done).
pub(super) fn problem_manifest(input: &Path, planner: Option<&str>) -> Result<Manifest, Error> {
    let mut m = Manifest::for_model_file(input);
    m.planner = PlannerKind::default();
    override_planner(&mut m, planner)?;
    if let PlannerKind::Auto(o) = &mut m.planner {
        o.slack_ppm = 1;
    }
    Ok(m)
}

/// Plans CSV problem `csv` on its own items ([`planner::solve_problem`]: no model pipeline,
/// no plan maps), without a capacity, so it always plans.
pub(super) fn solve_csv(
    csv: &planner::import::csv::CsvProblem,
    planner: &PlannerKind,
) -> Result<planner::SolvedProblem, Error> {
    match planner::solve_problem(csv, planner, None, 0)? {
        planner::Solution::Solved(s) => Ok(*s),
        planner::Solution::DoesNotFit { best_height, .. } => Err(Error::invalid_input(format!(
            "internal planner error: a problem without a capacity did not fit (best height {best_height}); please report it with the problem file"
        ))),
    }
}

/// A manifest that lists several models, read as a group (`None` for anything else).
pub(super) fn group_of(
    path: &Path,
    planner: Option<&str>,
) -> Result<Option<manifest::Group>, Error> {
    if path.is_dir() {
        return Ok(None);
    }
    let format = planner::import::format_of(path)?;
    if !matches!(format.kind, FormatKind::Manifest) {
        return Ok(None);
    }
    // The same test as `planner_build::compile`: a `[group]` table or `[[model]]` tables
    // make a group, even of one model, so every command reads what the build script builds.
    if !manifest::lists_models(path)? {
        return Ok(None);
    }
    let mut g = manifest::load_group(path)?;
    for m in &mut g.models {
        override_planner(m, planner)?;
    }
    Ok(Some(g))
}

pub(super) fn override_planner(m: &mut Manifest, name: Option<&str>) -> Result<(), Error> {
    if let Some(name) = name {
        m.planner = PlannerKind::from_name(name, &BTreeMap::new())
            .map_err(|e| Error::invalid_input(&e.message))?;
    }
    Ok(())
}

/// Sets a `--time-limit` on the manifest's planner (`auto` or `optimal`).
pub(super) fn set_time_limit(m: &mut Manifest, limit: &str) -> Result<(), Error> {
    let d = parse_duration(limit).ok_or_else(|| {
        Error::invalid_input(format!(
            "--time-limit {limit:?} is not a duration; write a number with ms, s or m (\"500ms\", \"5s\")"
        ))
    })?;
    match &mut m.planner {
        PlannerKind::Auto(o) => o.time_limit = Some(d),
        PlannerKind::Optimal(o) => o.time_limit = Some(d),
        other => {
            return Err(Error::invalid_input(format!(
                "--time-limit is for the auto and optimal planners, but the planner is `{}`; drop --time-limit or pick --planner auto",
                other.name()
            )));
        }
    }
    Ok(())
}

/// `--in-place` is for one model: a CSV problem has no ops, and a group manifest says it in
/// its `[memory]` table.
pub(super) fn refuse_in_place(input: &Path, in_place: bool) -> Result<(), Error> {
    if !in_place || input.is_dir() {
        return Ok(());
    }
    if is_problem(input)? {
        return Err(usage(
            "--in-place is for models; a CSV problem has no ops to run in place, so drop --in-place",
        ));
    }
    if group_of(input, None)?.is_some() {
        return Err(usage(
            "--in-place is for one model; for a group, set in_place = true in the manifest's [memory] table",
        ));
    }
    Ok(())
}

pub(super) fn plan(inp: &Input) -> Result<Planned, Error> {
    plan_as(inp, &inp.manifest)
}

pub(super) fn plan_as(inp: &Input, manifest: &Manifest) -> Result<Planned, Error> {
    match &inp.problem {
        Some(p) => p.plan_as(manifest),
        None => planner::plan_graph(manifest, &inp.graph),
    }
}

/// Plans a group, with its warnings on stderr.
pub(super) fn plan_group(g: &manifest::Group) -> Result<planner::GroupPlanned, Error> {
    let planned = planner::plan_group(g)?;
    for m in &planned.models {
        warn(m);
    }
    Ok(planned)
}

/// Checks that `arenas` link on `target` (an error), or on this host when no target is
/// given (a warning: the plan may be for a board).
pub(super) fn links<'a>(
    arenas: impl Iterator<Item = &'a planner::planfile::ArenaEntry>,
    name: &str,
    source: &Path,
    target: Option<&str>,
) -> Result<(), Error> {
    let limit = crate::target::link_limit(
        &target.map_or_else(crate::target::current_target, str::to_string),
    );
    match (crate::target::check(arenas, name, source, &limit), target) {
        (Err(e), None) => {
            eprint(&format!(
                "warning: {}; pass --target to check the target the plan is for\n",
                e.message()
            ));
            Ok(())
        }
        (r, _) => r,
    }
}
