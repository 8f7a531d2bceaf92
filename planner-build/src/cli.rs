//! The `planner` command. Exit codes: 0 planned, 1 valid input that cannot be planned (it
//! does not fit), 2 input rejected (bad manifest, model, option or file).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use planner::graph::{Graph, TensorIndex};
use planner::lifetimes::Lifetimes;
use planner::manifest::{self, Manifest};
use planner::pack::PlannerKind;
use planner::{Error, Planned, ProblemOutcome, report};

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
    },
    /// Every planner side by side: bytes per scratch arena, lower bound, ratio, time.
    Compare {
        /// The manifest, model or problem file.
        input: PathBuf,
        /// For a CSV problem: the height everything must fit under.
        #[arg(long)]
        capacity: Option<String>,
    },
    /// Print a starter manifest for a `.tflite` model that plans as it is.
    Import {
        /// The model.
        model: PathBuf,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A table for people.
    Table,
    /// One JSON object: the plan's fields plus format_version, model and planner.
    Json,
    /// For CSV problems: the input rows plus an `offset` column.
    Csv,
}

/// A loaded input: what to plan and how.
struct Input {
    manifest: Manifest,
    graph: Graph,
    /// Lifetimes given by the input itself (CSV problems); `None`: from the op order.
    lifetimes: Option<Lifetimes>,
    fixed: BTreeMap<TensorIndex, u64>,
    /// The problem, for CSV inputs.
    csv: Option<planner::import::csv::CsvProblem>,
}

/// Runs the command with the process's arguments.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(if e.is_infeasible() { 1 } else { 2 })
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Command::Plan {
            input,
            planner,
            format,
            capacity,
            node_budget,
            time_limit,
        } => {
            let mut inp = load(&input, capacity.as_deref())?;
            override_planner(&mut inp.manifest, planner.as_deref())?;
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
                    }
                }
                _ => plan(&inp)?,
            };
            warn(&planned);
            let state = time_limit.as_ref().map(|t| certificate_state(&planned, t));
            if let (Some(state), false) = (&state, format == Format::Table) {
                eprint!("{state}");
            }
            let out = match format {
                Format::Table => {
                    report::table(&planned, &planned.graph) + state.as_deref().unwrap_or("")
                }
                Format::Json => report::json(&planned) + "\n",
                Format::Csv => csv_out(&inp, &planned),
            };
            print(&out);
            Ok(ExitCode::SUCCESS)
        }
        Command::Explain {
            input,
            tensor,
            planner,
        } => {
            let mut inp = load(&input, None)?;
            override_planner(&mut inp.manifest, planner.as_deref())?;
            if let Some(t) = &tensor
                && !inp.graph.tensors.iter().any(|x| &x.id == t || &x.name == t)
            {
                return Err(usage(&format!(
                    "model {} has no tensor with id or name {t:?}; `planner explain {}` lists them",
                    inp.manifest.name,
                    input.display()
                )));
            }
            let planned = plan(&inp)?;
            print(&report::explain(
                &planned,
                &planned.graph,
                tensor.as_deref(),
            ));
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare { input, capacity } => {
            let inp = load(&input, capacity.as_deref())?;
            print(&compare(&inp)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Import { model } => {
            print(&import(&model)?);
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn usage(msg: &str) -> Error {
    Error::invalid_input(msg)
}

fn print(s: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(s.as_bytes());
    let _ = out.flush();
}

fn warn(planned: &Planned) {
    for w in &planned.warnings {
        eprintln!("warning: {w}");
    }
}

fn override_planner(m: &mut Manifest, name: Option<&str>) -> Result<(), Error> {
    if let Some(name) = name {
        m.planner = PlannerKind::from_name(name, &BTreeMap::new())
            .map_err(|e| Error::invalid_input(&e.message))?;
    }
    Ok(())
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

fn load(path: &Path, capacity: Option<&str>) -> Result<Input, Error> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if capacity.is_some() && ext != "csv" {
        return Err(Error::invalid_input(
            "--capacity is for CSV problems; a manifest sets budgets with memory.constraints",
        ));
    }
    let manifest = match ext.as_str() {
        "toml" => manifest::load(path)?,
        "tflite" => Manifest::for_model_file(path),
        "csv" => {
            let csv = planner::import::csv::read(path)?;
            let name = manifest::sanitize_name(
                &path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            );
            let (manifest, graph, lifetimes, fixed) =
                planner::problem_input(&csv, &name, &PlannerKind::default());
            return Ok(Input {
                manifest,
                graph,
                lifetimes: Some(lifetimes),
                fixed,
                csv: Some(csv),
            });
        }
        _ => {
            return Err(Error::invalid_input(format!(
                "{} is neither a manifest (.toml), a model (.tflite) nor a problem (.csv)",
                path.display()
            )));
        }
    };
    let graph = planner::import::load(&manifest)?;
    Ok(Input {
        manifest,
        graph,
        lifetimes: None,
        fixed: BTreeMap::new(),
        csv: None,
    })
}

fn plan(inp: &Input) -> Result<Planned, Error> {
    plan_as(inp, &inp.manifest)
}

fn plan_as(inp: &Input, manifest: &Manifest) -> Result<Planned, Error> {
    match &inp.lifetimes {
        Some(l) => planner::plan_with(manifest, &inp.graph, l, &inp.fixed),
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

fn compare(inp: &Input) -> Result<String, Error> {
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
    Ok(s)
}

fn import(model: &Path) -> Result<String, Error> {
    let m = Manifest::for_model_file(model);
    let graph = planner::import::load(&m)?;
    let source = model.to_string_lossy().replace('\\', "/");
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
        model.display(),
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
    s.push_str(
        "preset = \"generic\"    # or: mps3-an547, stm32h743, imxrt1062; or list `memories`\n",
    );
    s.push_str("# min_alignment = 16\n\n");
    s.push_str("[memory]\n");
    s.push_str("planner = \"greedy_by_size\"   # greedy, greedy_by_size, hill_climb\n");
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
            "#   {{ type = \"constant\", id = \"{}\", attributes = {{ memory = \"FLASH\", constant_destination_memory = \"DTCM\" }} }},  # {} ({} bytes)\n",
            t.id, t.name, t.size
        ));
    }
    s.push_str("# ]\n");
    Ok(s)
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
