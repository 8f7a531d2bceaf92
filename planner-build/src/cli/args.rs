//! The command line as clap reads it: the commands, their options, and the options' values
//! (durations, capacities, patch settings) turned into what the planner takes.

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand, ValueEnum};
use planner::Error;
use planner::manifest::{self, Manifest};

use planner::import::FormatKind;

#[derive(Parser)]
#[command(
    name = "planner",
    version,
    about = "Static memory plans for ML models on microcontrollers"
)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
}

/// How a model runs, as `plan` and `explain` take it: in place, in patches.
#[derive(clap::Args)]
pub(super) struct RunArgs {
    /// Fold PADs into convolutions and run ops in place (`memory.in_place = true`); the
    /// kernel set must implement the `*InPlace` traits and explicit padding.
    #[arg(long)]
    pub(super) in_place: bool,
    #[command(flatten)]
    pub(super) patches: PatchArgs,
}

impl RunArgs {
    /// Sets the manifest's in-place and patch settings from the options.
    pub(super) fn apply(&self, input: &Path, m: &mut Manifest) -> Result<(), Error> {
        m.aliasing.in_place |= self.in_place;
        self.patches.apply(input, m)
    }
}

/// The patch-based first stage, as on the command line (`memory.patches`).
#[derive(clap::Args, Clone, Default)]
pub(super) struct PatchArgs {
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

    /// Sets every model's patch settings of group `g` from the options, as `--planner` sets
    /// every model's planner. A fixed split (`OP:ROWSxCOLS`) names an op of one model, so
    /// it is for a group of one; a group of several takes `auto` or `off`, or a split in the
    /// model's own `[[model]]` table.
    pub(super) fn apply_group(&self, g: &mut manifest::Group) -> Result<(), Error> {
        if self.is_empty() {
            return Ok(());
        }
        if let Some(p) = self.patches.as_deref()
            && p != "auto"
            && p != "off"
            && g.models.len() > 1
        {
            return Err(usage(&format!(
                "--patches {p} names an op of one model, but group {} has {} models; use --patches auto or off, or set memory.patches in that model's [[model]] table",
                g.name,
                g.models.len()
            )));
        }
        for m in &mut g.models {
            if self.patches.is_none() && m.patches.mode == planner::patch::PatchMode::Off {
                return Err(usage(&format!(
                    "--patch-input and --max-recompute need patches, but model {} of group {} plans without them: add --patches auto (or set memory.patches in its [[model]] table)",
                    m.name, g.name
                )));
            }
            self.set(m)?;
        }
        Ok(())
    }

    /// Sets the manifest's patch settings from the options.
    pub(super) fn apply(&self, input: &Path, m: &mut Manifest) -> Result<(), Error> {
        if self.is_empty() {
            return Ok(());
        }
        if input.is_dir() || is_problem(input)? {
            return Err(usage(
                "--patches, --patch-input and --max-recompute are for models; a CSV problem or a folder has no ops to split, so drop them",
            ));
        }
        self.set(m)
    }

    /// Sets `m`'s patch settings from the options.
    fn set(&self, m: &mut Manifest) -> Result<(), Error> {
        use planner::patch::{PatchMode, SplitRef};
        use planner::planfile::patch::PatchInput;
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
pub(super) enum Command {
    /// Plan a manifest (`.toml`), a model (`.tflite`) or a MiniMalloc problem (`.csv`).
    #[command(after_long_help = manifest::preset_list())]
    Plan(PlanArgs),
    /// One line per tensor: where it goes and why.
    Explain(ExplainArgs),
    /// Every planner side by side: bytes per scratch arena, lower bound, ratio, time; and
    /// what TensorFlow Lite Micro's planner would need (`tflm`) beside the manifest's.
    Compare(CompareArgs),
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
        target: Target,
    },
}

#[derive(clap::Args)]
pub(super) struct PlanArgs {
    /// The manifest, model or problem file.
    pub(super) input: PathBuf,
    /// Use this planner instead of the manifest's (with its default options).
    #[arg(long)]
    pub(super) planner: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(super) format: Format,
    /// For a CSV problem: the height everything must fit under (bytes, or `512K`).
    #[arg(long)]
    pub(super) capacity: Option<String>,
    /// For a CSV problem with a capacity: the most search nodes the exact search may
    /// visit when the heuristics land above the capacity (deterministic).
    #[arg(long, default_value_t = 20_000_000)]
    pub(super) node_budget: u64,
    /// Plan for about this long (`500ms`, `5s`, `2m`) instead of counting work, with the
    /// `auto` or `optimal` planner: the best plan found in that time, which depends on
    /// the machine and its load (without it, plans never do). With --capacity, also the
    /// exact search's stop (default 10s, a safety stop; `none`: the node budget alone).
    #[arg(long)]
    pub(super) time_limit: Option<String>,
    /// Refuse a plan whose arenas would not link for this target triple
    /// (`thumbv8m.main-none-eabihf`, `x86_64-unknown-linux-gnu`); without it, a plan
    /// that would not link on this host gets a warning.
    #[arg(long, value_name = "TRIPLE")]
    pub(super) target: Option<String>,
    #[command(flatten)]
    pub(super) run: RunArgs,
}

#[derive(clap::Args)]
pub(super) struct ExplainArgs {
    /// The manifest, model or problem file.
    pub(super) input: PathBuf,
    /// Only this tensor (id or name).
    #[arg(long)]
    pub(super) tensor: Option<String>,
    /// Use this planner instead of the manifest's.
    #[arg(long)]
    pub(super) planner: Option<String>,
    /// Output format: the lines, or one row per tensor (model, tensor, name, role,
    /// memory, source_memory, offset, size, reason) as JSON objects or CSV.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(super) format: Format,
    #[command(flatten)]
    pub(super) run: RunArgs,
}

#[derive(clap::Args)]
pub(super) struct CompareArgs {
    /// The manifest, model or problem file.
    pub(super) input: PathBuf,
    /// For a CSV problem: the height everything must fit under.
    #[arg(long)]
    pub(super) capacity: Option<String>,
    /// Output format: the table, or its rows as JSON objects or CSV (no svg: `plan
    /// --format svg` draws a plan).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(super) format: Format,
    /// Plan the manifest's rows with PADs folded and ops in place (`memory.in_place = true`); the
    /// in-place row then shows the classic plan.
    #[arg(long)]
    pub(super) in_place: bool,
    /// For a CSV problem: about how long the whole comparison may take (`500ms`, `20s`,
    /// `2m`; default 20s). The searches (best_of_greedy's passes, hill_climb, optimal, auto)
    /// stop at their shares of the time left, and a row whose search was cut says so; `none`
    /// runs each planner to its own budget (the same heights on every machine).
    #[arg(long)]
    pub(super) time_limit: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Format {
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

impl Format {
    /// `explain` and `compare` draw no picture: `command --format svg` is refused.
    pub(super) fn refuse_svg(self, command: &str) -> Result<(), Error> {
        if self != Format::Svg {
            return Ok(());
        }
        Err(usage(&format!(
            "{command} draws no picture; `planner plan <input> --format svg` draws a plan (a group's too); use --format table, json or csv"
        )))
    }
}

/// `500ms`, `5s`, `2m` or a plain number of seconds.
pub(super) fn parse_duration(s: &str) -> Option<std::time::Duration> {
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

pub(super) fn parse_capacity(s: &str) -> Result<u64, Error> {
    manifest::parse_size(s).ok_or_else(|| {
        Error::invalid_input(format!(
            "--capacity {s:?} is not a byte count; write an integer or digits with K, M or G (\"1M\")"
        ))
    })
}

/// What to export to.
#[derive(Subcommand)]
pub(super) enum Target {
    /// The model with our plan as TFLM's `OfflineMemoryAllocation` metadata: a TFLM
    /// application loading it uses our offsets for its arena's non-persistent section.
    Tflm {
        /// The `.tflite` model (planned on the `generic` preset, one scratch arena).
        model: PathBuf,
        /// Where to write the exported model.
        #[arg(short, long)]
        output: PathBuf,
        /// Use this planner instead of the default (`auto`).
        #[arg(long)]
        planner: Option<String>,
        /// Room for a kernel scratch buffer of BYTES during op OP (`OP=BYTES`, repeatable; `OP=0`
        /// for a kernel that requests none),
        /// beyond those of TFLM's reference kernels the exporter knows: TFLM plans kernel
        /// scratch at run time around the offline offsets, above them when the plan leaves
        /// no room at that op.
        #[arg(long, value_name = "OP=BYTES")]
        kernel_scratch: Vec<String>,
    },
}

/// An error in how the command was called (exit code 2).
pub(super) fn usage(msg: &str) -> Error {
    Error::invalid_input(msg)
}

/// Whether `path` is a CSV planning problem (not a manifest, model or directory).
pub(super) fn is_problem(path: &Path) -> Result<bool, Error> {
    Ok(!path.is_dir() && matches!(planner::import::format_of(path)?.kind, FormatKind::Problem))
}
