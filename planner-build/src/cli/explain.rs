//! `planner explain`: one line per tensor, where it goes and why.

use std::process::ExitCode;

use planner::{Error, report};

use super::args::{ExplainArgs, Format};
use super::input::{group_of, load, override_planner, plan, plan_group, refuse_in_place};
use super::output::{print, rows_as, usage};

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
