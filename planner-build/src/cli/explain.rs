//! `planner explain`: one line per tensor, where it goes and why.

use std::process::ExitCode;

use planner::{Error, report};

use super::args::RunArgs;
use super::args::{ExplainArgs, Format, is_problem, usage};
use super::input::{
    group_of, load, override_planner, plan, plan_group, problem_manifest, refuse_in_place,
    solve_csv,
};
use super::output::{print, rows_as};

/// `planner explain`: a group's or a model's lines, or its rows as JSON or CSV.
pub(super) fn command(args: ExplainArgs) -> Result<ExitCode, Error> {
    let ExplainArgs {
        input,
        tensor,
        planner,
        format,
        run,
    } = args;
    let (input, tensor, planner) = (input.as_path(), tensor.as_deref(), planner.as_deref());
    refuse_in_place(input, run.in_place)?;
    format.refuse_svg("explain")?;
    if let Some(mut g) = group_of(input, planner)? {
        run.patches.apply_group(&mut g)?;
        let planned = plan_group(&g)?;
        if format != Format::Table {
            let mut rows = Vec::new();
            for m in &planned.models {
                let r = report::explain_rows(m, tensor);
                if rows.is_empty() {
                    rows.extend(r);
                } else {
                    rows.extend(r.into_iter().skip(1));
                }
            }
            print(&rows_as(format, &rows));
            return Ok(ExitCode::SUCCESS);
        }
        print(&planner::report::group_explain(&planned, tensor));
        return Ok(ExitCode::SUCCESS);
    }
    if is_problem(input)? {
        return explain_problem(input, tensor, planner, format, &run);
    }
    let mut inp = load(input, None)?;
    override_planner(&mut inp.manifest, planner)?;
    run.apply(input, &mut inp.manifest)?;
    // The plan's graph: the tensors a kernel set's preparation added are in it too.
    let planned = plan(&inp)?;
    if let Some(t) = tensor
        && !planned
            .graph
            .tensors
            .iter()
            .any(|x| x.id == t || x.name == t)
    {
        return Err(usage(&format!(
            "model {} has no tensor with id or name {t:?}; `planner explain {}` lists them",
            inp.manifest.name,
            input.display()
        )));
    }
    if format != Format::Table {
        print(&rows_as(format, &report::explain_rows(&planned, tensor)));
        return Ok(ExitCode::SUCCESS);
    }
    print(&report::explain(&planned, &planned.graph, tensor));
    Ok(ExitCode::SUCCESS)
}

/// `planner explain X.csv`: where each buffer went in the plan `planner plan X.csv` prints
/// (planned on the problem's own items, without the model pipeline: on 10^6 rows that took
/// 44 s and 2.4 GB).
fn explain_problem(
    input: &std::path::Path,
    tensor: Option<&str>,
    planner: Option<&str>,
    format: Format,
    run: &RunArgs,
) -> Result<ExitCode, Error> {
    let mut m = problem_manifest(input, planner)?;
    // Refuses --patches and the like, which a problem has no ops for.
    run.apply(input, &mut m)?;
    let csv = planner::import::csv::read(input)?;
    if let Some(t) = tensor
        && !csv.ids.iter().any(|id| id == t)
    {
        return Err(usage(&format!(
            "problem {} has no buffer with id {t:?}; `planner explain {}` lists them",
            m.name,
            input.display()
        )));
    }
    let solved = solve_csv(&csv, &m.planner)?;
    if format != Format::Table {
        let rows = report::problem_explain_rows(&m.name, &csv, &solved, tensor);
        print(&rows_as(format, &rows));
    } else {
        print(&report::problem_explain(&csv, &solved, tensor));
    }
    Ok(ExitCode::SUCCESS)
}
