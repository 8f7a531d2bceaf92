//! The `planner` command. Exit codes: 0 planned, 1 valid input that cannot be planned (it
//! does not fit), 2 input rejected (bad manifest, model, option or file), 3 the answer could
//! not be written to standard output (a closed pipe, a full disk).
//!
//! Nothing here uses `println!` or `eprintln!`: they panic when the stream is closed (`planner
//! plan x | head -1`), so every write goes through [`print`] or [`eprint`], which never panic.

mod export;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use planner::graph::Graph;
use planner::import::FormatKind;
use planner::manifest::{self, Manifest, Schedule};
use planner::pack::PlannerKind;
use planner::{Error, Planned, ProblemOutcome, Solution, report};

#[derive(Parser)]
#[command(
    name = "planner",
    version,
    about = "Static memory plans for ML models on microcontrollers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The patch-based first stage, as on the command line (`memory.patches`).
#[derive(clap::Args, Clone, Default)]
struct PatchArgs {
    /// Run the first stage patch by patch (`memory.patches`): `auto` (the split and grid
    /// with the lowest peak within --max-recompute) or `OP:ROWSxCOLS` (`12:4x4`; OP an op
    /// index or its output tensor's name); `off` plans without patches. The kernel set
    /// must implement `planner::rt::kernel::Patches`.
    #[arg(long, value_name = "auto|OP:RxC|off")]
    patches: Option<String>,
    /// How the model input reaches the patch stage (`memory.patch_input`): `resident`
    /// (whole in RAM) or `streamed` (a callback fills each patch's input region).
    #[arg(long, value_name = "resident|streamed")]
    patch_input: Option<String>,
    /// Most extra multiply-accumulates patches may cost, a fraction (`memory.max_recompute`,
    /// default 0.2).
    #[arg(long, value_name = "FRACTION")]
    max_recompute: Option<f64>,
}

impl PatchArgs {
    /// True when no patch option was given.
    fn is_empty(&self) -> bool {
        self.patches.is_none() && self.patch_input.is_none() && self.max_recompute.is_none()
    }

    /// A group manifest sets patches per manifest, not on the command line.
    fn refuse_group(&self) -> Result<(), Error> {
        if self.is_empty() {
            return Ok(());
        }
        Err(usage(
            "--patches, --patch-input and --max-recompute are for one model; for a group, set memory.patches in the manifest",
        ))
    }

    /// Sets the manifest's patch settings from the options.
    fn apply(&self, input: &Path, m: &mut Manifest) -> Result<(), Error> {
        use planner::patch::{PatchMode, SplitRef};
        use planner::planfile::patch::PatchInput;
        if self.is_empty() {
            return Ok(());
        }
        if input.is_dir() || is_problem(input)? {
            return Err(usage(
                "--patches, --patch-input and --max-recompute are for one model; for a group, set memory.patches in the manifest",
            ));
        }
        if let Some(r) = self.max_recompute {
            if !r.is_finite() || r < 0.0 {
                return Err(usage(&format!(
                    "--max-recompute is {r}, not a fraction of 0 or more; write 0.2 for at most 20 % more multiply-accumulates"
                )));
            }
            m.patches.max_recompute = Some(r);
        }
        if let Some(i) = &self.patch_input {
            m.patches.input = match i.as_str() {
                "resident" => PatchInput::Resident,
                "streamed" => PatchInput::Streamed,
                other => {
                    return Err(usage(&format!(
                        "--patch-input is {other:?}; use resident or streamed"
                    )));
                }
            };
        }
        let budget = m
            .patches
            .max_recompute
            .unwrap_or(planner::manifest::DEFAULT_MAX_RECOMPUTE);
        match self.patches.as_deref() {
            None => {}
            Some("off") => m.patches.mode = PatchMode::Off,
            Some("auto") => {
                m.patches.mode = PatchMode::Auto {
                    max_recompute: budget,
                }
            }
            Some(text) => {
                let bad = || {
                    usage(&format!(
                        "--patches is {text:?}; use auto, off, or OP:ROWSxCOLS such as 12:4x4 (OP an op index or its output tensor's name)"
                    ))
                };
                let (op, grid) = text.rsplit_once(':').ok_or_else(bad)?;
                let (r, c) = grid.split_once(['x', 'X']).ok_or_else(bad)?;
                let side = |v: &str| {
                    v.trim()
                        .parse::<u32>()
                        .ok()
                        .filter(|&n| (1..=1024).contains(&n))
                };
                let (Some(r), Some(c)) = (side(r), side(c)) else {
                    return Err(bad());
                };
                if op.is_empty() {
                    return Err(bad());
                }
                let split = match op.parse::<u32>() {
                    Ok(i) => SplitRef::Index(i),
                    Err(_) => SplitRef::Name(op.to_string()),
                };
                m.patches.mode = PatchMode::Fixed {
                    split,
                    grid: [r, c],
                };
            }
        }
        if let PatchMode::Auto { max_recompute } = &mut m.patches.mode {
            *max_recompute = budget;
        }
        if m.patches.mode == PatchMode::Off && self.patches.as_deref() != Some("off") {
            return Err(usage(
                "--patch-input and --max-recompute need patches: add --patches auto (or set memory.patches in the manifest)",
            ));
        }
        Ok(())
    }
}

#[derive(Subcommand)]
enum Command {
    /// Plan a manifest (`.toml`), a model (`.tflite`) or a MiniMalloc problem (`.csv`).
    Plan {
        /// The manifest, model or problem file.
        input: PathBuf,
        /// Use this planner instead of the manifest's (with its default options).
        #[arg(long)]
        planner: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// For a CSV problem: the height everything must fit under (bytes, or `512K`).
        #[arg(long)]
        capacity: Option<String>,
        /// For a CSV problem with a capacity: the most search nodes the exact search may
        /// visit when the heuristics land above the capacity (deterministic).
        #[arg(long, default_value_t = 20_000_000)]
        node_budget: u64,
        /// Plan for about this long (`500ms`, `5s`, `2m`) instead of counting work, with the
        /// `auto` or `optimal` planner: the best plan found in that time, which depends on
        /// the machine and its load (without it, plans never do).
        #[arg(long)]
        time_limit: Option<String>,
        /// Refuse a plan whose arenas would not link for this target triple
        /// (`thumbv8m.main-none-eabihf`, `x86_64-unknown-linux-gnu`); without it, a plan
        /// that would not link on this host gets a warning.
        #[arg(long, value_name = "TRIPLE")]
        target: Option<String>,
        /// Fold PADs into convolutions and run ops in place (`memory.in_place = true`); the
        /// kernel set must implement the `*InPlace` traits and explicit padding.
        #[arg(long)]
        in_place: bool,
        #[command(flatten)]
        patches: PatchArgs,
    },
    /// One line per tensor: where it goes and why.
    Explain {
        /// The manifest, model or problem file.
        input: PathBuf,
        /// Only this tensor (id or name).
        #[arg(long)]
        tensor: Option<String>,
        /// Use this planner instead of the manifest's.
        #[arg(long)]
        planner: Option<String>,
        /// Output format: the lines, or one row per tensor (model, tensor, name, role,
        /// memory, source_memory, offset, size, reason) as JSON objects or CSV.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// Fold PADs into convolutions and run ops in place (`memory.in_place = true`); the
        /// kernel set must implement the `*InPlace` traits and explicit padding.
        #[arg(long)]
        in_place: bool,
        #[command(flatten)]
        patches: PatchArgs,
    },
    /// Every planner side by side: bytes per scratch arena, lower bound, ratio, time; and
    /// what TensorFlow Lite Micro's planner would need (`tflm`) beside the manifest's.
    Compare {
        /// The manifest, model or problem file.
        input: PathBuf,
        /// For a CSV problem: the height everything must fit under.
        #[arg(long)]
        capacity: Option<String>,
        /// Output format: the table, or its rows as JSON objects or CSV (no svg: `plan
        /// --format svg` draws a plan).
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// Plan the manifest's rows with PADs folded and ops in place (`memory.in_place = true`); the
        /// in-place row then shows the classic plan.
        #[arg(long)]
        in_place: bool,
    },
    /// Print a starter manifest for a `.tflite` model that plans as it is.
    Import {
        /// The model.
        model: PathBuf,
        /// Write the manifest here (its `source` is then relative to this file's folder)
        /// instead of printing it (its `source` is then the model's file name: save it
        /// beside the model).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Write a plan in another tool's format (`export tflm MODEL.tflite -o OUT.tflite`).
    Export {
        /// The format.
        #[command(subcommand)]
        target: export::Target,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A table for people.
    Table,
    /// One JSON object: the plan's fields plus format_version, model and planner (a group:
    /// its arenas with their users, then each model's plan).
    Json,
    /// For CSV problems: the input rows plus an `offset` column (a group: one row per
    /// arena user).
    Csv,
    /// A memory map picture: one panel per arena, x = op, y = offset (a group: the group's
    /// arenas, models side by side).
    Svg,
}

/// A loaded input: what to plan and how.
struct Input {
    manifest: Manifest,
    graph: Graph,
    /// The problem with its own lifetimes and fixed offsets, for CSV inputs.
    problem: Option<planner::ProblemInput>,
    /// The problem, for CSV inputs.
    csv: Option<planner::import::csv::CsvProblem>,
}

/// Runs the command with the process's arguments.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let printed = e.print().is_ok();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else if printed {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(3)
            };
        }
    };
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprint(&format!("error: {e}\n"));
            ExitCode::from(if e.is_infeasible() { 1 } else { 2 })
        }
    };
    if STDOUT_FAILED.load(Ordering::Relaxed) {
        return ExitCode::from(3);
    }
    code
}

/// Set when a write to standard output failed: the answer did not get out, so the command
/// ends with exit code 3 whatever it planned.
static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);

fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Command::Plan {
            input,
            planner,
            format,
            capacity,
            node_budget,
            time_limit,
            target,
            in_place,
            patches,
        } => {
            refuse_in_place(&input, in_place)?;
            if let Some(g) = group_of(&input, planner.as_deref())? {
                patches.refuse_group()?;
                return plan_group_table(&g, &input, format, target.as_deref());
            }
            if format != Format::Svg && is_problem(&input)? {
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
            inp.manifest.aliasing.in_place |= in_place;
            patches.apply(&input, &mut inp.manifest)?;
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
                            return Ok(ExitCode::from(1));
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
        Command::Explain {
            input,
            tensor,
            planner,
            format,
            in_place,
            patches,
        } => explain_command(
            &input,
            tensor.as_deref(),
            planner.as_deref(),
            format,
            in_place,
            &patches,
        ),
        Command::Compare {
            input,
            capacity,
            format,
            in_place,
        } => compare_command(&input, capacity.as_deref(), format, in_place),
        Command::Import { model, output } => {
            let text = import(&model, output.as_deref())?;
            match output {
                Some(out) => {
                    std::fs::write(&out, text).map_err(|e| Error::file(&out, "write", e))?
                }
                None => print(&text),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Export { target } => export::run(target),
    }
}

/// `planner explain`: a group's or a model's lines, or its rows as JSON or CSV.
fn explain_command(
    input: &Path,
    tensor: Option<&str>,
    planner: Option<&str>,
    format: Format,
    in_place: bool,
    patches: &PatchArgs,
) -> Result<ExitCode, Error> {
    refuse_in_place(input, in_place)?;
    if format == Format::Svg {
        return Err(usage(
            "explain draws no picture; `planner plan <input> --format svg` draws a plan (a group's too); use --format table, json or csv",
        ));
    }
    if let Some(g) = group_of(input, planner)? {
        patches.refuse_group()?;
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
    inp.manifest.aliasing.in_place |= in_place;
    patches.apply(input, &mut inp.manifest)?;
    if let Some(t) = tensor
        && !inp.graph.tensors.iter().any(|x| x.id == t || x.name == t)
    {
        return Err(usage(&format!(
            "model {} has no tensor with id or name {t:?}; `planner explain {}` lists them",
            inp.manifest.name,
            input.display()
        )));
    }
    let planned = plan(&inp)?;
    if format != Format::Table {
        print(&rows_as(format, &report::explain_rows(&planned, tensor)));
        return Ok(ExitCode::SUCCESS);
    }
    print(&report::explain(&planned, &planned.graph, tensor));
    Ok(ExitCode::SUCCESS)
}

/// `planner compare`: every planner side by side, for a group, a model or a CSV problem.
fn compare_command(
    input: &Path,
    capacity: Option<&str>,
    format: Format,
    in_place: bool,
) -> Result<ExitCode, Error> {
    refuse_in_place(input, in_place)?;
    if format == Format::Svg {
        return Err(usage(
            "compare draws no picture; `planner plan <input> --format svg` draws a plan (a group's too); use --format table, json or csv",
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
    let mut inp = load(input, capacity)?;
    inp.manifest.aliasing.in_place |= in_place;
    print(&compare(&inp, format)?);
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

/// `--in-place` is for one model: a CSV problem has no ops, and a group manifest says it in
/// its `[memory]` table.
fn refuse_in_place(input: &Path, in_place: bool) -> Result<(), Error> {
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

fn usage(msg: &str) -> Error {
    Error::invalid_input(msg)
}

/// Writes `s` to standard output; a failure (a closed pipe) is remembered for the exit code
/// and the rest of the output is dropped, never a panic.
fn print(s: &str) {
    if STDOUT_FAILED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if out
        .write_all(s.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        STDOUT_FAILED.store(true, Ordering::Relaxed);
    }
}

/// Writes `s` to standard error. A closed standard error is ignored: the exit code still
/// says what happened.
fn eprint(s: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(s.as_bytes()).and_then(|()| err.flush());
}

fn warn(planned: &Planned) {
    for w in planned.graph.warnings.iter().chain(&planned.warnings) {
        eprint(&format!("warning: {w}\n"));
    }
}

/// Checks that `arenas` link on `target` (an error), or on this host when no target is
/// given (a warning: the plan may be for a board).
fn links<'a>(
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

fn override_planner(m: &mut Manifest, name: Option<&str>) -> Result<(), Error> {
    if let Some(name) = name {
        m.planner = PlannerKind::from_name(name, &BTreeMap::new())
            .map_err(|e| Error::invalid_input(&e.message))?;
    }
    Ok(())
}

/// A manifest that lists several models, read as a group (`None` for anything else).
fn group_of(path: &Path, planner: Option<&str>) -> Result<Option<manifest::Group>, Error> {
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

/// Plans a group, with its warnings on stderr.
fn plan_group(g: &manifest::Group) -> Result<planner::GroupPlanned, Error> {
    let planned = planner::plan_group(g)?;
    for m in &planned.models {
        warn(m);
    }
    Ok(planned)
}

/// Sets a `--time-limit` on the manifest's planner (`auto` or `optimal`).
fn set_time_limit(m: &mut Manifest, limit: &str) -> Result<(), Error> {
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

/// `500ms`, `5s`, `2m` or a plain number of seconds.
fn parse_duration(s: &str) -> Option<std::time::Duration> {
    let s = s.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0 && v * scale < 1e9)
        .then(|| std::time::Duration::from_secs_f64(v * scale))
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

/// True for a CSV problem file.
fn is_problem(path: &Path) -> Result<bool, Error> {
    Ok(!path.is_dir() && matches!(planner::import::format_of(path)?.kind, FormatKind::Problem))
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
    let mut m = Manifest::for_model_file(input);
    m.planner = PlannerKind::default();
    override_planner(&mut m, planner)?;
    // Heights here run to gigabytes: a part within a millionth of the bound is done.
    if let PlannerKind::Auto(o) = &mut m.planner {
        o.slack_ppm = 1;
    }
    if let Some(t) = time_limit {
        set_time_limit(&mut m, t)?;
    }
    let cap = capacity.map(parse_capacity).transpose()?;
    let solved = match planner::solve_problem(&csv, &m.planner, cap, node_budget)? {
        Solution::Solved(s) => s,
        Solution::DoesNotFit {
            best_height,
            proven,
        } => {
            let cap = cap.unwrap_or(0);
            if proven {
                eprintln!(
                    "error: {} does not fit below {cap} bytes: the exact search proved that no placement does; the best height found is {best_height}",
                    input.display()
                );
            } else {
                eprintln!(
                    "error: no placement of {} below {cap} bytes was found within {node_budget} search nodes; the best height found is {best_height}; raise --node-budget or --capacity",
                    input.display()
                );
            }
            return Ok(ExitCode::from(1));
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
        eprint!("{state}");
    }
    let out = match format {
        Format::Json => report::problem_json(&m.name, &csv, &solved) + "\n",
        Format::Csv => planner::import::csv::write(&csv, &solved.packing),
        _ => report::problem_table(&m.name, &csv, &solved) + state.as_deref().unwrap_or(""),
    };
    print(&out);
    Ok(ExitCode::SUCCESS)
}

fn load(path: &Path, capacity: Option<&str>) -> Result<Input, Error> {
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
fn directory_hint(dir: &Path) -> Error {
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

fn plan(inp: &Input) -> Result<Planned, Error> {
    plan_as(inp, &inp.manifest)
}

fn plan_as(inp: &Input, manifest: &Manifest) -> Result<Planned, Error> {
    match &inp.problem {
        Some(p) => p.plan_as(manifest),
        None => planner::plan_graph(manifest, &inp.graph),
    }
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

fn parse_capacity(s: &str) -> Result<u64, Error> {
    manifest::parse_size(s).ok_or_else(|| {
        Error::invalid_input(format!(
            "--capacity {s:?} is not a byte count; write an integer or digits with K, M or G (\"1M\")"
        ))
    })
}

fn compare(inp: &Input, format: Format) -> Result<String, Error> {
    let mut rows: Vec<Vec<String>> = vec![
        [
            "planner",
            "memory",
            "used",
            "lower bound",
            "ratio",
            "optimal",
            "time",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    ];
    let mut m = inp.manifest.clone();
    for name in PlannerKind::NAMES {
        m.planner = PlannerKind::from_name(name, &BTreeMap::new())
            .map_err(|e| Error::invalid_input(&e.message))?;
        // Best of three runs, so a cold first run does not decide the figure.
        let mut took = std::time::Duration::MAX;
        let mut result = None;
        for _ in 0..3 {
            let start = Instant::now();
            let r = plan_as(inp, &m);
            took = took.min(start.elapsed());
            result = Some(r);
        }
        let Some(result) = result else { continue };
        match result {
            Ok(p) => {
                for r in &p.scratch_reports {
                    let ratio = if r.lower_bound == 0 {
                        1.0
                    } else {
                        r.used as f64 / r.lower_bound as f64
                    };
                    rows.push(vec![
                        name.to_string(),
                        r.memory.clone(),
                        r.used.to_string(),
                        r.lower_bound.to_string(),
                        format!("{ratio:.4}"),
                        if r.optimal { "yes" } else { "-" }.to_string(),
                        format!("{:.3} ms", took.as_secs_f64() * 1e3),
                    ]);
                }
            }
            Err(e) => rows.push(vec![
                name.to_string(),
                "-".into(),
                format!("failed: {}", e.message()),
                String::new(),
                String::new(),
                String::new(),
                format!("{:.3} ms", took.as_secs_f64() * 1e3),
            ]),
        }
    }
    if inp.problem.is_none() {
        rows.extend(reordered_rows(inp));
        rows.extend(in_place_rows(inp));
    }
    if format != Format::Table {
        return Ok(rows_as(format, &rows));
    }
    let mut widths = vec![0usize; rows[0].len()];
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut s = format!(
        "model {} · {} ops · {} tensors\n\n",
        inp.manifest.name,
        inp.graph.ops.len(),
        inp.graph.tensors.len()
    );
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, &w)| format!("{c:<w$}"))
            .collect();
        s.push_str(line.join("  ").trim_end());
        s.push('\n');
    }
    s.push_str(&tflm_line(inp));
    Ok(s)
}

/// `compare` for a group: every planner plans every model of the group, and each row is one
/// of the group's arenas.
fn compare_group(g: &manifest::Group, format: Format) -> Result<String, Error> {
    let mut rows: Vec<Vec<String>> = vec![
        [
            "planner",
            "arena",
            "used",
            "separate",
            "lower bound",
            "ratio",
            "time",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    ];
    for name in PlannerKind::NAMES {
        let mut g = g.clone();
        let kind = PlannerKind::from_name(name, &BTreeMap::new())
            .map_err(|e| Error::invalid_input(&e.message))?;
        for m in &mut g.models {
            m.planner = kind.clone();
        }
        let start = Instant::now();
        let result = planner::plan_group(&g);
        let took = format!("{:.3} ms", start.elapsed().as_secs_f64() * 1e3);
        match result {
            Ok(p) => {
                for a in &p.arenas {
                    let ratio = if a.lower_bound == 0 {
                        1.0
                    } else {
                        a.arena.used as f64 / a.lower_bound as f64
                    };
                    rows.push(vec![
                        name.to_string(),
                        format!("{} {}", a.arena.role.name(), a.arena.memory),
                        a.arena.used.to_string(),
                        a.separate.to_string(),
                        a.lower_bound.to_string(),
                        format!("{ratio:.4}"),
                        took.clone(),
                    ]);
                }
            }
            Err(e) => rows.push(vec![
                name.to_string(),
                "-".into(),
                format!("failed: {}", e.message()),
                String::new(),
                String::new(),
                String::new(),
                took,
            ]),
        }
    }
    if format != Format::Table {
        return Ok(rows_as(format, &rows));
    }
    let mut widths = vec![0usize; rows[0].len()];
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let names: Vec<&str> = g.models.iter().map(|m| m.name.as_str()).collect();
    let mut s = format!(
        "group {} · {} models ({})\n\n",
        g.name,
        names.len(),
        names.join(", ")
    );
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, &w)| format!("{c:<w$}"))
            .collect();
        s.push_str(line.join("  ").trim_end());
        s.push('\n');
    }
    Ok(s)
}

/// A table's rows (the first is the header) as JSON objects keyed by the header in
/// snake case (numbers as numbers, `12.5 ms` as `time_ms`), or as CSV.
fn rows_as(format: Format, rows: &[Vec<String>]) -> String {
    let Some((header, body)) = rows.split_first() else {
        return String::new();
    };
    let keys: Vec<String> = header.iter().map(|h| h.replace(' ', "_")).collect();
    if format == Format::Csv {
        let field = |s: &str| {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        let mut s = keys.join(",") + "\n";
        for r in body {
            let line: Vec<String> = r.iter().map(|c| field(c)).collect();
            s.push_str(&line.join(","));
            s.push('\n');
        }
        return s;
    }
    // JSON by hand: planner-build has no JSON dependency of its own.
    let string = |s: &str| {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    };
    let objects: Vec<String> = body
        .iter()
        .map(|r| {
            let fields: Vec<String> = keys
                .iter()
                .zip(r)
                .map(|(k, c)| {
                    let (key, text) = match c.strip_suffix(" ms") {
                        Some(ms) => (format!("{k}_ms"), ms),
                        None => (k.clone(), c.as_str()),
                    };
                    // Names stay strings even when they look like numbers (tensor ids).
                    const NAMES: [&str; 9] = [
                        "planner",
                        "arena",
                        "memory",
                        "source_memory",
                        "model",
                        "tensor",
                        "name",
                        "role",
                        "reason",
                    ];
                    let number = !NAMES.contains(&key.as_str()) && text.parse::<u64>().is_ok()
                        || !NAMES.contains(&key.as_str())
                            && text.parse::<f64>().is_ok_and(|x| x.is_finite());
                    let value = if number && !text.is_empty() {
                        text.to_string()
                    } else {
                        string(text)
                    };
                    format!("    {}: {value}", string(&key))
                })
                .collect();
            format!("  {{\n{}\n  }}", fields.join(",\n"))
        })
        .collect();
    format!("[\n{}\n]\n", objects.join(",\n"))
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
    let took = format!("{:.3} ms", start.elapsed().as_secs_f64() * 1e3);
    match result {
        Ok(p) => p
            .scratch_reports
            .iter()
            .map(|r| {
                let ratio = if r.lower_bound == 0 {
                    1.0
                } else {
                    r.used as f64 / r.lower_bound as f64
                };
                vec![
                    label.clone(),
                    r.memory.clone(),
                    r.used.to_string(),
                    r.lower_bound.to_string(),
                    format!("{ratio:.4}"),
                    if r.optimal { "yes" } else { "-" }.to_string(),
                    took.clone(),
                ]
            })
            .collect(),
        Err(e) => vec![vec![
            label,
            "-".into(),
            format!("failed: {}", e.message()),
            String::new(),
            String::new(),
            String::new(),
            took,
        ]],
    }
}

fn import(model: &Path, output: Option<&Path>) -> Result<String, Error> {
    if model.is_dir() {
        return Err(directory_hint(model));
    }
    let m = Manifest::for_model_file(model);
    let graph = planner::import::load(&m)?;
    let source = manifest_source(model, output)?;
    let constants = graph
        .tensors
        .iter()
        .filter(|t| t.kind == planner::graph::TensorKind::Constant)
        .count();
    let variables = graph
        .tensors
        .iter()
        .filter(|t| t.kind == planner::graph::TensorKind::Variable)
        .count();
    let mut s = String::new();
    s.push_str(&format!(
        "# Starter manifest for {} ({} ops, {} tensors: {constants} constant, {variables} variable).\n",
        comment_text(&model.display().to_string()),
        graph.ops.len(),
        graph.tensors.len()
    ));
    s.push_str("# It plans as it is; uncomment and edit the lines below for your board.\n\n");
    s.push_str("[model]\n");
    s.push_str(&format!("name = \"{}\"\n", m.name));
    s.push_str(&format!(
        "source = {}          # relative to this manifest's folder\n\n",
        toml_string(&source)
    ));
    s.push_str("[platform]\n");
    let boards: Vec<&str> = planner::manifest::Platform::PRESETS
        .iter()
        .copied()
        .filter(|p| *p != "generic")
        .collect();
    s.push_str(&format!(
        "preset = \"generic\"    # or: {}; or list `memories`\n",
        boards.join(", ")
    ));
    s.push_str("# min_alignment = 16\n\n");
    s.push_str("[memory]\n");
    s.push_str("planner = \"auto\"   # the default; or greedy, greedy_by_size, best_of_greedy, hill_climb, optimal\n");
    s.push_str("# constraints = [                 # bank preference order for scratch\n");
    s.push_str("#   { name = \"DTCM\", max_size = \"256K\", arena_alignment = 32 },\n");
    s.push_str("#   { name = \"SRAM\" },\n");
    s.push_str("# ]\n");
    s.push_str("# tensors = [                     # placement rules\n");
    s.push_str("#   { type = \"constant\", attributes = { memory = \"FLASH\" } },\n");
    if let Some(t) = graph
        .tensors
        .iter()
        .filter(|t| t.kind == planner::graph::TensorKind::Constant)
        .max_by_key(|t| (t.size, std::cmp::Reverse(t.id.clone())))
    {
        s.push_str(&format!(
            "#   {{ type = \"constant\", id = {}, attributes = {{ memory = \"FLASH\", constant_destination_memory = \"DTCM\" }} }},  # {} ({} bytes)\n",
            toml_string(&t.id),
            comment_text(&t.name),
            t.size
        ));
    }
    s.push_str("# ]\n");
    Ok(s)
}

/// Text for a TOML comment: control characters (a newline would end the comment and make
/// the rest of the name a line of TOML) written as `\u{..}` escapes.
fn comment_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                format!("\\u{{{:04X}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The `source` of a manifest for `model`: relative to the folder of `output`, the file
/// the manifest is written to; the model's file name when printed (saved beside it).
fn manifest_source(model: &Path, output: Option<&Path>) -> Result<String, Error> {
    let name = || {
        model
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let Some(out) = output else {
        return Ok(name());
    };
    let abs = |p: &Path| -> Result<PathBuf, Error> {
        std::path::absolute(p).map_err(|e| Error::file(p, "resolve", e))
    };
    let model_abs = abs(model)?;
    let out_dir = abs(out)?
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    Ok(relative_path(&model_abs, &out_dir)
        .to_string_lossy()
        .replace('\\', "/"))
}

/// `target` relative to the folder `base` (both absolute): `..` up to their common
/// ancestor, then down.
fn relative_path(target: &Path, base: &Path) -> PathBuf {
    use std::path::Component;
    fn clean(p: &Path) -> Vec<Component<'_>> {
        let mut out: Vec<Component<'_>> = Vec::new();
        for c in p.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                    out.pop();
                }
                c => out.push(c),
            }
        }
        out
    }
    let (t, b) = (clean(target), clean(base));
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c.as_os_str());
    }
    out
}

fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
