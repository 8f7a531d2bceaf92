//! The TOML manifest: which model, which platform, which memory rules.
//!
//! [`load`] reads a manifest file; [`Manifest::parse`] reads one from text. Every error names
//! the file, the line and column, the value seen and what would fix it; unknown keys get a
//! did-you-mean. The full format is in `docs/manifest.md`.

//!
//! By concern: [`presets`] holds the built-in platforms as one table; `schema` the TOML's
//! shapes as serde reads them (inline graphs included, which [`crate::import`] turns into a
//! graph); `check` turns them into a [`Manifest`] with positioned errors; `patches` the
//! patch-stage settings; [`group`](Group) several `[[model]]` tables.

use std::boxed::Box;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::vec::Vec;

use crate::error::{Error, Result, Span};
use crate::graph::Graph;
use crate::pack::PlannerKind;
use crate::plan::{ArenaRole, MemoryConstraint};

mod check;
mod ctx;
mod group;
mod patches;
mod presets;
mod schema;
#[cfg(test)]
pub(crate) mod tests;

pub(crate) use ctx::Ctx;
pub use group::{Group, lists_models, load_group};
pub use patches::{DEFAULT_MAX_RECOMPUTE, PatchMode, Patches, SplitRef};
pub use presets::{Preset, preset_list, presets};
pub(crate) use schema::RawTensor;
pub use schema::{InlineModel, Size, parse_size};
pub use crate::graph::KernelSet;

/// One memory of the platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Memory {
    /// Name used in rules, constraints, plans and section names (`DTCM`, `FLASH`).
    pub name: String,
    /// Bytes; `None` for an unlimited memory (the `generic` preset's host memories).
    pub size: Option<u64>,
    /// Whether the program may write it at run time.
    pub writable: bool,
    /// Whether kernels can read it in place (memory-mapped); a read-only memory that is not
    /// can only be the source of staged constants.
    pub readable_in_place: bool,
    /// Base address, when known (used by the linker fragment and the ELF checks).
    pub origin: Option<u64>,
}

/// The target platform: its memories in order, and the smallest alignment of any slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    /// The preset's name, or `custom`.
    pub name: String,
    /// Memories, in the order the manifest (or preset) gives them.
    pub memories: Vec<Memory>,
    /// Every slot's offset is a multiple of this (a power of two).
    pub min_alignment: u64,
}

const K: u64 = 1024;
const M: u64 = 1024 * 1024;

impl Platform {
    /// The memory called `name`.
    pub fn memory(&self, name: &str) -> Option<&Memory> {
        self.memories.iter().find(|m| m.name == name)
    }
}

/// What a placement rule matches by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleType {
    /// `type = "*"` or no type: every role.
    Any,
    /// One role.
    Role(ArenaRole),
}

/// One entry of `memory.tensors`: which tensors, and where they go.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Position in `memory.tensors`.
    pub index: usize,
    /// Role filter.
    pub rule_type: RuleType,
    /// Id patterns (exact or glob with `*` and `?`), matched against a tensor's id or name;
    /// `None` matches every tensor.
    pub ids: Option<Vec<String>>,
    /// Runtime memory (for constants: where they are read from, or staged from).
    pub memory: Option<String>,
    /// For constants: the writable memory they are copied into at init.
    pub constant_destination_memory: Option<String>,
    pub(crate) span: Option<Span>,
    /// Where the rule is written, when not in `memory.tensors`: `model.rules[0]`.
    pub(crate) label: Option<String>,
}

impl Rule {
    /// Precedence: catch-all 0 < type-only 1 < id-only 2 < type+id 3.
    pub fn precedence(&self) -> u8 {
        match (self.rule_type, &self.ids) {
            (RuleType::Any, None) => 0,
            (RuleType::Role(_), None) => 1,
            (RuleType::Any, Some(_)) => 2,
            (RuleType::Role(_), Some(_)) => 3,
        }
    }

    /// Whether the rule applies to a tensor of `role` with this id and name.
    pub fn matches(&self, role: ArenaRole, id: &str, name: &str) -> bool {
        if let RuleType::Role(r) = self.rule_type
            && r != role
        {
            return false;
        }
        match &self.ids {
            None => true,
            Some(pats) => pats
                .iter()
                .any(|p| glob_match(p, id) || glob_match(p, name)),
        }
    }

    /// How `explain` names the rule: `memory.tensors[2] (id "conv_*")`.
    pub fn describe(&self) -> String {
        let mut s = match &self.label {
            Some(l) => l.clone(),
            None => format!("memory.tensors[{}]", self.index),
        };
        let ty = match self.rule_type {
            RuleType::Any => None,
            RuleType::Role(r) => Some(r.name()),
        };
        match (ty, &self.ids) {
            (None, None) => s.push_str(" (catch-all)"),
            (Some(t), None) => s.push_str(&format!(" (type {t})")),
            (t, Some(ids)) => {
                let ids: Vec<String> = ids.iter().map(|i| format!("{i:?}")).collect();
                match t {
                    Some(t) => s.push_str(&format!(" (type {t}, id {})", ids.join(", "))),
                    None => s.push_str(&format!(" (id {})", ids.join(", "))),
                }
            }
        }
        s
    }
}

/// Matches `text` against a glob with `*` (any run) and `?` (one character).
#[doc(hidden)]
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Where the model comes from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ModelSource {
    /// A model file (`.tflite`), resolved against the manifest's folder.
    File(PathBuf),
    /// A graph described in the manifest (`model.tensors`, `model.ops`), read by the import
    /// stage ([`crate::import::load`]).
    Inline(Box<InlineModel>),
    /// A graph built in code (a CSV problem, a test).
    Graph(Box<Graph>),
}

/// A checked manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The file it was read from (for messages); `<generated>` for built ones.
    pub path: PathBuf,
    /// Model name: prefix of every generated item.
    pub name: String,
    /// Where the graph comes from.
    pub source: ModelSource,
    /// The platform.
    pub platform: Platform,
    /// The packer.
    pub planner: PlannerKind,
    /// Budgets, in bank preference order for scratch.
    pub constraints: Vec<MemoryConstraint>,
    /// Placement rules, in file order.
    pub rules: Vec<Rule>,
    /// Step-scope slabs reserved in the plan (`memory.slabs`).
    pub slabs: Vec<SlabDef>,
    /// Which tensors may share their input's bytes.
    pub aliasing: Aliasing,
    /// Operator order.
    pub schedule: Schedule,
    /// Most bytes of constants given by size alone (zero-filled) the plan may hold
    /// (`memory.max_zero_constants`, default [`DEFAULT_MAX_ZERO_CONSTANTS`]): their blob is
    /// written and compiled into the firmware like any weights.
    pub max_zero_constants: u64,
    /// Patch-based first stage (`memory.patches`, `memory.max_recompute`,
    /// `memory.patch_input`; see [`crate::patch`]).
    pub patches: Patches,
    /// The kernel set the plan is made for (`[kernels] set`, shared by a group's models):
    /// which constants the planner prepares and which kernel scratch it plans for it.
    pub kernels: KernelSet,
    /// Where each memory's budget is written, for errors about a full bank.
    pub(crate) budget_spans: BudgetSpans,
}

/// Where the manifest sets each memory's budget: a constraint's `max_size`, and the
/// memory's `size` (its entry in `platform.memories`, or the `preset` line).
#[derive(Debug, Clone, Default)]
pub(crate) struct BudgetSpans {
    max_size: BTreeMap<String, Span>,
    size: BTreeMap<String, Span>,
}

/// Default of `memory.max_zero_constants`: 16 MiB.
pub const DEFAULT_MAX_ZERO_CONSTANTS: u64 = 16 * M;

/// A step-scope slab reserved as a tensor of the plan (`memory.slabs`): a byte region for
/// code that runs outside the model graph (pre- and post-processing), handed to
/// [`rt::slab`](crate::rt::slab) at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlabDef {
    /// Name; the slab's tensor id is `slab/<name>`.
    pub name: String,
    /// Bytes.
    pub size: u64,
    /// Memory it lives in.
    pub memory: String,
    /// `persistent`: its own bytes for the whole program; `scratch`: it shares the scratch
    /// arena's bytes and is valid only between model runs.
    pub role: ArenaRole,
    /// Alignment of the slab's start.
    pub alignment: Option<u64>,
}

impl SlabDef {
    /// The tensor id the slab takes in the plan.
    pub fn tensor_id(&self) -> String {
        format!("slab/{}", self.name)
    }
}

/// Which outputs may take their input's bytes when the input dies there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Aliasing {
    /// Reshape-like ops (RESHAPE, SQUEEZE, EXPAND_DIMS, ...) whose output is the input's
    /// bytes (`memory.alias_reshapes`).
    pub reshapes: bool,
    /// Only these op kinds run in place (`memory.in_place_ops`, upper case; each one whose
    /// row of the op-kind table allows it); empty: every kind the table allows, when
    /// [`Aliasing::in_place`] is on.
    pub in_place_ops: Vec<String>,
    /// Fold PADs into the convolutions that consume them and run ops in place over inputs
    /// that die there (`memory.in_place`).
    pub in_place: bool,
    /// Let convolutions and pools write their output rows over the input rows they have
    /// read (`memory.row_overlap`, see [`crate::rt::rows`]).
    pub row_overlap: bool,
}

impl Aliasing {
    /// Whether any op may run in place: `memory.in_place`, or kinds named in
    /// `memory.in_place_ops`.
    pub fn runs_in_place(&self) -> bool {
        self.in_place || !self.in_place_ops.is_empty()
    }
}

/// Which operator order the plan uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Schedule {
    /// The model's own order.
    #[default]
    Fixed,
    /// A topological order that lowers the peak of live bytes (`schedule = "memory"`).
    Memory,
}

impl Manifest {
    /// Parses and checks manifest text; `path` is used in messages and to resolve the model
    /// source and constant data files.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest> {
        let text: std::sync::Arc<str> = std::sync::Arc::from(text);
        let ctx = ctx::Ctx { path, text: &text };
        group::refuse_many(&text, path)?;
        let raw: schema::RawManifest = toml::from_str(&text).map_err(|e| ctx::toml_error(e, &ctx))?;
        let shared = check::Shared::check(&ctx, raw.platform, raw.memory, raw.kernels)?;
        shared.with_model(&ctx, raw.model, "model.rules")
    }
}

/// Reads and checks the manifest at `path`.
pub fn load(path: &Path) -> Result<Manifest> {
    let text = crate::limited::read_manifest(path)?;
    Manifest::parse(&text, path)
}

impl Manifest {
    /// A manifest for a model file with no manifest of its own: the `generic` preset, the
    /// default planner, no rules.
    pub fn for_model_file(path: &Path) -> Manifest {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".to_string());
        Manifest {
            path: PathBuf::from("<generated>"),
            name: sanitize_name(&stem),
            source: ModelSource::File(path.to_path_buf()),
            platform: Platform::generic(),
            planner: PlannerKind::default(),
            constraints: Vec::new(),
            rules: Vec::new(),
            slabs: Vec::new(),
            aliasing: Aliasing::default(),
            schedule: Schedule::Fixed,
            max_zero_constants: DEFAULT_MAX_ZERO_CONSTANTS,
            patches: Patches::default(),
            kernels: KernelSet::default(),
            budget_spans: BudgetSpans::default(),
        }
    }

    /// The memories unpinned scratch may use, in preference order: the constraints' order
    /// when there are constraints, else every writable memory in platform order.
    pub fn scratch_banks(&self) -> Vec<&Memory> {
        if self.constraints.is_empty() {
            self.platform
                .memories
                .iter()
                .filter(|m| m.writable)
                .collect()
        } else {
            self.constraints
                .iter()
                .filter_map(|c| self.platform.memory(&c.name))
                .filter(|m| m.writable)
                .collect()
        }
    }

    /// The constraint on memory `name`, if any.
    pub fn constraint(&self, name: &str) -> Option<&MemoryConstraint> {
        self.constraints.iter().find(|c| c.name == name)
    }

    /// Most bytes the plan may use in memory `name` (`None`: unlimited).
    pub fn budget(&self, name: &str) -> Option<u64> {
        let size = self.platform.memory(name).and_then(|m| m.size);
        match self.constraint(name).and_then(|c| c.max_size) {
            Some(max) => Some(size.map_or(max, |s| s.min(max))),
            None => size,
        }
    }

    /// Where the budget of memory `name` is written, and what that line sets: the
    /// constraint's `max_size` when it is the smaller limit, else the memory's size.
    pub(crate) fn budget_source(&self, name: &str) -> Option<(Span, String)> {
        let size = self.platform.memory(name).and_then(|m| m.size);
        let max = self.constraint(name).and_then(|c| c.max_size);
        if let Some(max) = max
            && size.is_none_or(|s| max <= s)
        {
            // A limit set in code, not in the file, has no line to point at.
            let span = self.budget_spans.max_size.get(name)?;
            return Some((span.clone(), format!("the max_size of {name}: {max} bytes")));
        }
        let span = self.budget_spans.size.get(name)?;
        let size = size?;
        let what = if self.platform.name == "custom" {
            format!("the size of {name}: {size} bytes")
        } else {
            format!(
                "the size of {name} in preset {}: {size} bytes",
                self.platform.name
            )
        };
        Some((span.clone(), what))
    }

    /// Slot and arena alignment floor in memory `name`: max(min_alignment, arena_alignment).
    pub fn memory_alignment(&self, name: &str) -> u64 {
        let arena = self
            .constraint(name)
            .and_then(|c| c.arena_alignment)
            .unwrap_or(1);
        self.platform.min_alignment.max(arena)
    }

    /// Where a rule is in the manifest, as `file:line:col`.
    pub fn rule_location(&self, rule: &Rule) -> String {
        match &rule.span {
            Some(s) => {
                let (l, c) = s.line_col();
                format!("{}:{l}:{c}", s.path.display())
            }
            None => self.path.display().to_string(),
        }
    }

    /// An error pointing at a rule's position in the manifest.
    pub(crate) fn rule_error(&self, rule: &Rule, message: String, help: &str) -> Error {
        let e = Error::input(message).help(help);
        match &rule.span {
            Some(s) => e.at(s.clone()),
            None => e,
        }
    }
}

/// Turns a file stem into a Rust-identifier-friendly model name.
#[doc(hidden)]
pub fn sanitize_name(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "m_");
    }
    out
}
