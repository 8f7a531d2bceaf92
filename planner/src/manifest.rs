//! The TOML manifest: which model, which platform, which memory rules.
//!
//! [`load`] reads a manifest file; [`Manifest::parse`] reads one from text. Every error names
//! the file, the line and column, the value seen and what would fix it; unknown keys get a
//! did-you-mean. The full format is in `docs/manifest.md`.

use std::boxed::Box;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

use serde::Deserialize;
use toml::Spanned;

use crate::error::{Error, Result, Span, did_you_mean};
use crate::graph::Graph;
pub use crate::import::inline::InlineModel;
use crate::import::inline::{RawOp, RawTensor};
use crate::pack::{OptionValue, PlannerKind};
use crate::plan::{ArenaRole, MemoryConstraint};
use crate::planfile::naming;

mod group;
pub use group::{Group, lists_models, load_group};

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

fn mem(name: &str, size: Option<u64>, writable: bool, origin: Option<u64>) -> Memory {
    Memory {
        name: name.to_string(),
        size,
        writable,
        readable_in_place: true,
        origin,
    }
}

impl Platform {
    /// Names of the built-in presets.
    pub const PRESETS: &'static [&'static str] = &[
        "generic",
        "mps3-an547",
        "netduinoplus2",
        "stm32f405",
        "stm32f407",
        "stm32f446",
        "stm32f746",
        "stm32h743",
        "imxrt1062",
        "nrf52840",
        "rp2040",
        "rp2350",
    ];

    /// A built-in platform by name.
    ///
    /// - `generic`: an unlimited writable `SRAM` and an unlimited read-only `FLASH`.
    /// - `mps3-an547`: Arm's Cortex-M55 FPGA image as QEMU maps it: `DTCM` 512 KiB at
    ///   0x2000_0000, `ITCM` 512 KiB at 0x0, `SRAM` 2 MiB at 0x0100_0000, `DDR` at
    ///   0x6000_0000, and the QSPI flash (`FLASH`, 8 MiB at 0x2800_0000) that QEMU maps as ROM.
    /// - `netduinoplus2`: QEMU's `netduinoplus2` machine (an STM32F405RG, Cortex-M4F), the
    ///   board `examples/firmware-m4f` runs on: `SRAM` 128 KiB at 0x2000_0000 and `FLASH`
    ///   1 MiB at 0x0800_0000. QEMU 7.2 (`hw/arm/stm32f405_soc.c`, `info mtree`) maps 192 KiB
    ///   of SRAM there, no CCM, and the flash again at 0x0 (where the core boots); the preset
    ///   takes the real part's 128 KiB, so a plan for it runs on the real chip too.
    /// - `stm32f405`, `stm32f407`: ST's Cortex-M4F (reference manual RM0090, sections 2.1
    ///   "System architecture", 2.3 "Memory map" and 2.3.1 "Embedded SRAM"; datasheet
    ///   DS8626): `SRAM` 128 KiB at 0x2000_0000 (SRAM1 112 KiB and SRAM2 16 KiB,
    ///   contiguous), `CCM` 64 KiB at 0x1000_0000 and `FLASH` 1 MiB at 0x0800_0000 (the xG
    ///   parts). CCM (core-coupled memory) is on the
    ///   core's data bus only: no DMA reaches it and no code runs from it, so keep buffers a
    ///   peripheral fills by DMA out of it (a rule placing them in `SRAM`); it is second, so
    ///   scratch takes it only when `SRAM` is full.
    /// - `stm32f446`: ST's Cortex-M4F (reference manual RM0390, section 2.2 "Memory
    ///   organization"; datasheet DS10693): `SRAM` 128 KiB at 0x2000_0000 (SRAM1
    ///   112 KiB and SRAM2 16 KiB, contiguous) and `FLASH` 512 KiB at 0x0800_0000.
    /// - `stm32f746`: ST's Cortex-M7 (reference manual RM0385, section 2.2 "Memory
    ///   organization"; datasheet DS10916): `DTCM` 64 KiB at 0x2000_0000, `ITCM`
    ///   16 KiB at 0x0, `SRAM` 256 KiB at 0x2001_0000 (SRAM1 240 KiB and SRAM2 16 KiB,
    ///   contiguous) and `FLASH` 1 MiB at 0x0800_0000 (its AXIM address).
    /// - `stm32h743`: ST's Cortex-M7: `DTCM` 128 KiB, `ITCM` 64 KiB, `AXI_SRAM` 512 KiB,
    ///   `SRAM123` 288 KiB, `SRAM4` 64 KiB, 2 MiB `FLASH` (reference manual RM0433 memory map).
    /// - `imxrt1062`: NXP's Cortex-M7 with FlexRAM in its default split: `DTCM` 128 KiB,
    ///   `ITCM` 128 KiB, `OCRAM` 768 KiB (256 KiB FlexRAM OCRAM + 512 KiB OCRAM2 as one
    ///   region from 0x2020_0000), and 8 MiB of FlexSPI NOR `FLASH` at 0x6000_0000 (as on
    ///   the Teensy 4.1 and the EVK boards).
    /// - `nrf52840`: Nordic's Cortex-M4F (nRF52840 Product Specification v1.7, section 4.2
    ///   "Memory", its memory map figure): `SRAM` 256 KiB at 0x2000_0000 (the Data RAM
    ///   address; the same RAM is Code RAM at 0x0080_0000) and `FLASH` 1 MiB at 0x0.
    /// - `rp2040`: Raspberry Pi's dual Cortex-M0+ (RP2040 Datasheet, section 2.2 "Address
    ///   map" and 2.6 "Memory"): `SRAM` 264 KiB at 0x2000_0000 (the striped SRAM0-3, 256 KiB,
    ///   then SRAM4 and SRAM5, 4 KiB each, contiguous) and `FLASH` 2 MiB at 0x1000_0000, the
    ///   XIP window of the external QSPI flash as on the Raspberry Pi Pico (the chip has no
    ///   internal flash; its first 256 bytes are the boot2 stage).
    /// - `rp2350`: Raspberry Pi's dual Cortex-M33 with FPU (RP2350 Datasheet, section 2.2 "Address
    ///   map" and 4.2 "SRAM"): `SRAM` 520 KiB at 0x2000_0000 (the striped SRAM0-7, 512 KiB,
    ///   then SRAM8 and SRAM9, 4 KiB each, contiguous) and `FLASH` 4 MiB at 0x1000_0000, the
    ///   XIP window of the external QSPI flash as on the Raspberry Pi Pico 2.
    pub fn preset(name: &str) -> Option<Platform> {
        let memories = match name {
            "generic" => vec![
                mem("SRAM", None, true, None),
                mem("FLASH", None, false, None),
            ],
            "mps3-an547" => vec![
                mem("DTCM", Some(512 * K), true, Some(0x2000_0000)),
                mem("ITCM", Some(512 * K), true, Some(0x0000_0000)),
                mem("SRAM", Some(2 * M), true, Some(0x0100_0000)),
                mem("DDR", Some(256 * M), true, Some(0x6000_0000)),
                mem("FLASH", Some(8 * M), false, Some(0x2800_0000)),
            ],
            "netduinoplus2" => vec![
                mem("SRAM", Some(128 * K), true, Some(0x2000_0000)),
                mem("FLASH", Some(M), false, Some(0x0800_0000)),
            ],
            "stm32f405" | "stm32f407" => vec![
                mem("SRAM", Some(128 * K), true, Some(0x2000_0000)),
                mem("CCM", Some(64 * K), true, Some(0x1000_0000)),
                mem("FLASH", Some(M), false, Some(0x0800_0000)),
            ],
            "stm32f446" => vec![
                mem("SRAM", Some(128 * K), true, Some(0x2000_0000)),
                mem("FLASH", Some(512 * K), false, Some(0x0800_0000)),
            ],
            "stm32f746" => vec![
                mem("DTCM", Some(64 * K), true, Some(0x2000_0000)),
                mem("ITCM", Some(16 * K), true, Some(0x0000_0000)),
                mem("SRAM", Some(256 * K), true, Some(0x2001_0000)),
                mem("FLASH", Some(M), false, Some(0x0800_0000)),
            ],
            "nrf52840" => vec![
                mem("SRAM", Some(256 * K), true, Some(0x2000_0000)),
                mem("FLASH", Some(M), false, Some(0x0000_0000)),
            ],
            "rp2040" => vec![
                mem("SRAM", Some(264 * K), true, Some(0x2000_0000)),
                mem("FLASH", Some(2 * M), false, Some(0x1000_0000)),
            ],
            "rp2350" => vec![
                mem("SRAM", Some(520 * K), true, Some(0x2000_0000)),
                mem("FLASH", Some(4 * M), false, Some(0x1000_0000)),
            ],
            "stm32h743" => vec![
                mem("DTCM", Some(128 * K), true, Some(0x2000_0000)),
                mem("ITCM", Some(64 * K), true, Some(0x0000_0000)),
                mem("AXI_SRAM", Some(512 * K), true, Some(0x2400_0000)),
                mem("SRAM123", Some(288 * K), true, Some(0x3000_0000)),
                mem("SRAM4", Some(64 * K), true, Some(0x3800_0000)),
                mem("FLASH", Some(2 * M), false, Some(0x0800_0000)),
            ],
            "imxrt1062" => vec![
                mem("DTCM", Some(128 * K), true, Some(0x2000_0000)),
                mem("ITCM", Some(128 * K), true, Some(0x0000_0000)),
                mem("OCRAM", Some(768 * K), true, Some(0x2020_0000)),
                mem("FLASH", Some(8 * M), false, Some(0x6000_0000)),
            ],
            _ => return None,
        };
        Some(Platform {
            name: name.to_string(),
            memories,
            min_alignment: 16,
        })
    }

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
    /// Where each memory's budget is written, for errors about a full bank.
    pub(crate) budget_spans: BudgetSpans,
}

/// `memory.patches`: whether and how the first stage runs patch by patch.
#[derive(Debug, Clone)]
pub struct Patches {
    /// Off, `"auto"`, or a given split and grid.
    pub mode: crate::patch::PatchMode,
    /// How the model input reaches the stage (`memory.patch_input`, default resident).
    pub input: crate::planfile::patch::PatchInput,
    /// `memory.max_recompute` when the manifest sets it.
    pub max_recompute: Option<f64>,
    /// Where `memory.patches` is written, for errors found while planning.
    pub(crate) span: Option<Span>,
}

impl Default for Patches {
    fn default() -> Patches {
        Patches {
            mode: crate::patch::PatchMode::Off,
            input: crate::planfile::patch::PatchInput::Resident,
            max_recompute: None,
            span: None,
        }
    }
}

impl Patches {
    /// An error about the patch settings, at `memory.patches` in the manifest when it is
    /// there.
    pub(crate) fn error(&self, message: String, help: &str) -> Error {
        match &self.span {
            Some(s) => Error::input(message).at(s.clone()).help(help),
            None => Error::input(message).help(help),
        }
    }
}

/// Default of `memory.max_recompute`: at most 20 % more multiply-accumulates.
pub const DEFAULT_MAX_RECOMPUTE: f64 = 0.2;

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

/// In-place aliasing: which outputs may take their input's slot when the input dies there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Aliasing {
    /// Reshape-like ops (RESHAPE, SQUEEZE, EXPAND_DIMS, ...) whose output is the input's
    /// bytes (`memory.alias_reshapes`).
    pub reshapes: bool,
    /// Elementwise op types whose kernels can write in place (`memory.in_place_ops`).
    pub in_place_ops: Vec<String>,
    /// Fold PADs into the convolutions that consume them and run ops in place over inputs
    /// that die there (`memory.in_place`; see [`crate::in_place`]).
    pub in_place: bool,
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

/// Reads and checks the manifest at `path`.
pub fn load(path: &Path) -> Result<Manifest> {
    let text = crate::import::limited::read_manifest(path)?;
    Manifest::parse(&text, path)
}

// ---- raw serde shapes -------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    model: Spanned<RawModel>,
    platform: Option<Spanned<RawPlatform>>,
    memory: Option<RawMemory>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    name: Spanned<String>,
    source: Option<Spanned<String>>,
    tensors: Option<Vec<Spanned<RawTensor>>>,
    ops: Option<Vec<Spanned<RawOp>>>,
    inputs: Option<Vec<Spanned<String>>>,
    outputs: Option<Vec<Spanned<String>>>,
    /// Placement rules of this model alone, after the shared `memory.tensors`.
    rules: Option<Vec<Spanned<RawRule>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlatform {
    preset: Option<Spanned<String>>,
    min_alignment: Option<Spanned<i64>>,
    memories: Option<Vec<Spanned<RawMemoryDef>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMemoryDef {
    name: Spanned<String>,
    size: Option<Spanned<Size>>,
    writable: bool,
    #[serde(default = "yes")]
    readable_in_place: bool,
    origin: Option<Spanned<Size>>,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMemory {
    planner: Option<Spanned<String>>,
    planner_options: Option<Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
    #[serde(default)]
    constraints: Vec<Spanned<RawConstraint>>,
    #[serde(default)]
    tensors: Vec<Spanned<RawRule>>,
    #[serde(default)]
    slabs: Vec<Spanned<RawSlab>>,
    #[serde(default)]
    alias_reshapes: bool,
    #[serde(default)]
    in_place_ops: Vec<Spanned<String>>,
    #[serde(default)]
    in_place: bool,
    schedule: Option<Spanned<String>>,
    max_zero_constants: Option<Spanned<Size>>,
    patches: Option<Spanned<toml::Value>>,
    max_recompute: Option<Spanned<toml::Value>>,
    patch_input: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSlab {
    name: Spanned<String>,
    size: Spanned<Size>,
    memory: Spanned<String>,
    role: Option<Spanned<String>>,
    alignment: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConstraint {
    name: Spanned<String>,
    max_size: Option<Spanned<Size>>,
    arena_alignment: Option<Spanned<i64>>,
    #[serde(default)]
    app_bound: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    #[serde(rename = "type")]
    rule_type: Option<Spanned<String>>,
    id: Option<Spanned<IdPattern>>,
    #[serde(default)]
    attributes: Option<Spanned<RawAttributes>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum IdPattern {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAttributes {
    memory: Option<Spanned<String>>,
    constant_destination_memory: Option<Spanned<String>>,
}

/// A byte count written as an integer or with a `K`/`M`/`G` suffix (`"512K"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub u64);

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Size, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Size;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte count: an integer, or a string such as \"512K\" or \"4M\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<Size, E> {
                u64::try_from(v)
                    .map(Size)
                    .map_err(|_| E::custom(format!("size {v} is negative; give a byte count >= 0")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<Size, E> {
                Ok(Size(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Size, E> {
                parse_size(v).map(Size).ok_or_else(|| {
                    E::custom(format!(
                        "size {v:?} is not a byte count; write an integer, or digits with K, M or G (\"512K\", \"4M\"), or 0x-hex"
                    ))
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses `"512K"`, `"4M"`, `"1G"`, `"4096"`, `"0x1000"` (also `KiB`/`KB` forms).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(&hex.replace('_', ""), 16).ok();
    }
    let digits_end = s
        .find(|c: char| !c.is_ascii_digit() && c != '_')
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(digits_end);
    if num.is_empty() {
        return None;
    }
    let n: u64 = num.replace('_', "").parse().ok()?;
    let mult = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => K,
        "M" | "MB" | "MIB" => M,
        "G" | "GB" | "GIB" => 1024 * M,
        _ => return None,
    };
    n.checked_mul(mult)
}

// ---- checking ---------------------------------------------------------------------------

pub(crate) struct Ctx<'a> {
    pub(crate) path: &'a Path,
    pub(crate) text: &'a Arc<str>,
}

impl Ctx<'_> {
    pub(crate) fn span(&self, range: std::ops::Range<usize>) -> Span {
        Span {
            path: self.path.to_path_buf(),
            text: self.text.clone(),
            range,
        }
    }

    pub(crate) fn err<T>(
        &self,
        s: &Spanned<T>,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Error {
        Error::input(message).at(self.span(s.span())).help(help)
    }

    pub(crate) fn alignment(&self, v: &Spanned<i64>, what: &str) -> Result<u64> {
        let a = *v.get_ref();
        if a <= 0 || !(a as u64).is_power_of_two() {
            return Err(self.err(
                v,
                format!("{what} is {a}, which is not a power of two"),
                "use 1, 2, 4, 8, 16, 32, ...",
            ));
        }
        // The generated arenas are aligned by `planner::rt::Align<N>`, which stops here.
        if a as u64 > crate::rt::MAX_ALIGN {
            return Err(self.err(
                v,
                format!(
                    "{what} is {a}, above {}, the largest alignment generated arenas support",
                    crate::rt::MAX_ALIGN
                ),
                format!("use a power of two up to {}", crate::rt::MAX_ALIGN),
            ));
        }
        Ok(a as u64)
    }
}

fn toml_error(e: toml::de::Error, ctx: &Ctx<'_>) -> Error {
    let msg = e.message().trim().to_string();
    let span = e.span();
    let mut err = Error::input(msg.clone()).with_source(e);
    // serde says "unknown field `x`, expected one of `a`, `b`": add a did-you-mean.
    if let Some(rest) = msg.strip_prefix("unknown field `")
        && let Some((seen, expected)) = rest.split_once('`')
    {
        let names: Vec<&str> = expected
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, s)| s)
            .collect();
        let help = match did_you_mean(seen, names.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("remove `{seen}`; the keys allowed here are listed above"),
        };
        err = err.help(help);
    }
    match span {
        Some(r) => err.at(ctx.span(r)),
        None => err.note(format!("in {}", ctx.path.display())),
    }
}

impl Manifest {
    /// Parses and checks manifest text; `path` is used in messages and to resolve the model
    /// source and constant data files.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest> {
        let text: Arc<str> = Arc::from(text);
        let ctx = Ctx { path, text: &text };
        group::refuse_many(&text, path)?;
        let raw: RawManifest = toml::from_str(&text).map_err(|e| toml_error(e, &ctx))?;
        let shared = Shared::check(&ctx, raw.platform, raw.memory)?;
        shared.with_model(&ctx, raw.model, "model.rules")
    }

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
            platform: Platform::preset("generic").unwrap_or_else(|| Platform {
                name: "generic".into(),
                memories: Vec::new(),
                min_alignment: 16,
            }),
            planner: PlannerKind::default(),
            constraints: Vec::new(),
            rules: Vec::new(),
            slabs: Vec::new(),
            aliasing: Aliasing::default(),
            schedule: Schedule::Fixed,
            max_zero_constants: DEFAULT_MAX_ZERO_CONSTANTS,
            patches: Patches::default(),
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

/// What the models of one manifest share: `[platform]` and `[memory]`.
pub(crate) struct Shared {
    platform: Platform,
    planner: PlannerKind,
    constraints: Vec<MemoryConstraint>,
    rules: Vec<Rule>,
    slabs: Vec<SlabDef>,
    aliasing: Aliasing,
    schedule: Schedule,
    max_zero_constants: u64,
    patches: Patches,
    budget_spans: BudgetSpans,
}

impl Shared {
    /// Checks `[platform]` and `[memory]`.
    fn check(
        ctx: &Ctx<'_>,
        platform: Option<Spanned<RawPlatform>>,
        memory: Option<RawMemory>,
    ) -> Result<Shared> {
        let (platform, size_spans) = check_platform(ctx, platform)?;
        let memory = memory.unwrap_or(RawMemory {
            planner: None,
            planner_options: None,
            constraints: Vec::new(),
            tensors: Vec::new(),
            slabs: Vec::new(),
            alias_reshapes: false,
            in_place_ops: Vec::new(),
            in_place: false,
            schedule: None,
            max_zero_constants: None,
            patches: None,
            max_recompute: None,
            patch_input: None,
        });
        let planner = check_planner(
            ctx,
            memory.planner.as_ref(),
            memory.planner_options.as_ref(),
        )?;
        let constraints = check_constraints(ctx, &platform, &memory.constraints)?;
        let budget_spans = BudgetSpans {
            max_size: memory
                .constraints
                .iter()
                .filter_map(|c| {
                    let c = c.get_ref();
                    let s = c.max_size.as_ref()?;
                    Some((c.name.get_ref().clone(), ctx.span(s.span())))
                })
                .collect(),
            size: size_spans,
        };
        let rules = check_rules(ctx, &platform, &memory.tensors, ("memory.tensors", 0))?;
        let slabs = check_slabs(ctx, &platform, &memory.slabs)?;
        let schedule = match &memory.schedule {
            None => Schedule::Fixed,
            Some(s) => match s.get_ref().as_str() {
                "fixed" => Schedule::Fixed,
                "memory" => Schedule::Memory,
                other => {
                    return Err(ctx.err(
                        s,
                        format!("memory.schedule is {other:?}"),
                        "use \"fixed\" (the model's order) or \"memory\" (an order that lowers the peak)",
                    ));
                }
            },
        };
        let mut in_place_ops = Vec::new();
        for op in &memory.in_place_ops {
            let name = op.get_ref().trim().to_ascii_uppercase();
            if name.is_empty() {
                return Err(ctx.err(
                    op,
                    "memory.in_place_ops has an empty op name",
                    "name op types such as \"ADD\" or \"MUL\"",
                ));
            }
            in_place_ops.push(name);
        }
        let patches = check_patches(ctx, &memory)?;
        let aliasing = Aliasing {
            reshapes: memory.alias_reshapes,
            in_place_ops,
            in_place: memory.in_place,
        };
        Ok(Shared {
            platform,
            planner,
            constraints,
            rules,
            slabs,
            aliasing,
            schedule,
            max_zero_constants: memory
                .max_zero_constants
                .map_or(DEFAULT_MAX_ZERO_CONSTANTS, |s| s.get_ref().0),
            patches,
            budget_spans,
        })
    }

    /// One model's manifest: the shared parts, its source, and its own rules (`rules_table`
    /// names them in messages) after the shared ones.
    fn with_model(
        &self,
        ctx: &Ctx<'_>,
        model: Spanned<RawModel>,
        rules_table: &str,
    ) -> Result<Manifest> {
        let path = ctx.path;
        let text = ctx.text;
        let base = path.parent().unwrap_or(Path::new(""));
        let model_span = model.span();
        let model = model.into_inner();
        let name = check_name(ctx, &model.name)?;
        let mut rules = self.rules.clone();
        if let Some(own) = &model.rules {
            let more = check_rules(ctx, &self.platform, own, (rules_table, rules.len()))?;
            rules.extend(more);
        }
        let source = match (&model.source, &model.tensors) {
            (Some(src), None) => {
                if model.ops.is_some() || model.inputs.is_some() || model.outputs.is_some() {
                    return Err(ctx.err(
                        src,
                        "model.source and an inline graph (ops, inputs, outputs) are both given",
                        "keep `source` for a model file, or describe the graph inline without it",
                    ));
                }
                ModelSource::File(base.join(src.get_ref()))
            }
            (None, Some(_)) => ModelSource::Inline(Box::new(InlineModel {
                path: path.to_path_buf(),
                text: text.clone(),
                tensors: model.tensors.unwrap_or_default(),
                ops: model.ops.unwrap_or_default(),
                inputs: model.inputs,
                outputs: model.outputs,
            })),
            (Some(src), Some(_)) => {
                return Err(ctx.err(
                    src,
                    "model.source and model.tensors are both given",
                    "keep `source` for a model file, or `tensors` and `ops` for an inline graph",
                ));
            }
            (None, None) => {
                return Err(Error::input("model has neither `source` nor `tensors`")
                    .at(ctx.span(model_span))
                    .help("add `source = \"model.tflite\"`, or describe the graph with `tensors` and `ops`"));
            }
        };
        Ok(Manifest {
            path: path.to_path_buf(),
            name,
            source,
            platform: self.platform.clone(),
            planner: self.planner.clone(),
            constraints: self.constraints.clone(),
            rules,
            slabs: self.slabs.clone(),
            aliasing: self.aliasing.clone(),
            schedule: self.schedule,
            max_zero_constants: self.max_zero_constants,
            patches: self.patches.clone(),
            budget_spans: self.budget_spans.clone(),
        })
    }
}

/// Checks `memory.patches`, `memory.max_recompute` and `memory.patch_input`.
fn check_patches(ctx: &Ctx<'_>, memory: &RawMemory) -> Result<Patches> {
    use crate::patch::{PatchMode, SplitRef};
    use crate::planfile::patch::PatchInput;
    const HELP: &str = "write patches = \"auto\", or patches = { split = \"<op index or output tensor name>\", grid = [rows, columns] }";
    let input_of = |s: &Spanned<String>, key: &str| -> Result<PatchInput> {
        match s.get_ref().as_str() {
            "resident" => Ok(PatchInput::Resident),
            "streamed" => Ok(PatchInput::Streamed),
            other => Err(ctx.err(
                s,
                format!("{key} is {other:?}"),
                "use \"resident\" (the input whole in RAM) or \"streamed\" (a callback fills each patch's input region)",
            )),
        }
    };
    let mut input = match &memory.patch_input {
        Some(s) => input_of(s, "memory.patch_input")?,
        None => PatchInput::Resident,
    };
    let max_recompute = match &memory.max_recompute {
        None => None,
        Some(v) => {
            let f = match v.get_ref() {
                toml::Value::Float(f) => Some(*f),
                toml::Value::Integer(i) => Some(*i as f64),
                _ => None,
            };
            match f {
                Some(f) if f.is_finite() && f >= 0.0 => Some(f),
                _ => {
                    return Err(ctx.err(
                        v,
                        format!("memory.max_recompute is {}, not a fraction of 0 or more", v.get_ref()),
                        "write the most extra multiply-accumulates patches may cost as a fraction, such as 0.2 for 20 %",
                    ));
                }
            }
        }
    };
    let Some(p) = &memory.patches else {
        if let Some(v) = &memory.max_recompute {
            return Err(ctx.err(
                v,
                "memory.max_recompute is set but memory.patches is not",
                "add patches = \"auto\", or remove max_recompute",
            ));
        }
        if let Some(v) = &memory.patch_input {
            return Err(ctx.err(
                v,
                "memory.patch_input is set but memory.patches is not",
                "add patches = \"auto\", or remove patch_input",
            ));
        }
        return Ok(Patches::default());
    };
    let mode = match p.get_ref() {
        toml::Value::String(s) if s == "auto" => PatchMode::Auto {
            max_recompute: max_recompute.unwrap_or(DEFAULT_MAX_RECOMPUTE),
        },
        toml::Value::String(s) if s == "off" => PatchMode::Off,
        toml::Value::Table(t) => {
            for key in t.keys() {
                if !["split", "grid", "input"].contains(&key.as_str()) {
                    let help = match did_you_mean(key, ["split", "grid", "input"]) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => "the keys of memory.patches are split, grid and input".to_string(),
                    };
                    return Err(ctx.err(
                        p,
                        format!("memory.patches has an unknown key `{key}`"),
                        help,
                    ));
                }
            }
            let split = match t.get("split") {
                Some(toml::Value::Integer(i)) if *i >= 0 && *i <= u32::MAX as i64 => {
                    SplitRef::Index(*i as u32)
                }
                Some(toml::Value::String(s)) if !s.is_empty() => match s.parse::<u32>() {
                    Ok(i) => SplitRef::Index(i),
                    Err(_) => SplitRef::Name(s.clone()),
                },
                Some(other) => {
                    return Err(ctx.err(
                        p,
                        format!("memory.patches.split is {other}, not an op index or name"),
                        "name the split op by its index in the model (0, 1, ...) or by its output tensor's name",
                    ));
                }
                None => {
                    return Err(ctx.err(p, "memory.patches has no `split`", HELP));
                }
            };
            let grid = match t.get("grid") {
                Some(toml::Value::Array(a)) if a.len() == 2 => {
                    let side = |v: &toml::Value| match v {
                        toml::Value::Integer(i) if (1..=1024).contains(i) => Some(*i as u32),
                        _ => None,
                    };
                    match (side(&a[0]), side(&a[1])) {
                        (Some(r), Some(c)) => [r, c],
                        _ => {
                            return Err(ctx.err(
                                p,
                                format!(
                                    "memory.patches.grid is {}, whose sides are not whole numbers from 1 to 1024",
                                    toml::Value::Array(a.clone())
                                ),
                                "write grid = [rows, columns], such as [4, 4]",
                            ));
                        }
                    }
                }
                Some(other) => {
                    return Err(ctx.err(
                        p,
                        format!("memory.patches.grid is {other}, not [rows, columns]"),
                        "write grid = [rows, columns], such as [4, 4]",
                    ));
                }
                None => return Err(ctx.err(p, "memory.patches has no `grid`", HELP)),
            };
            if let Some(v) = t.get("input") {
                let s = match v {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let spanned = Spanned::new(p.span(), s);
                input = input_of(&spanned, "memory.patches.input")?;
            }
            PatchMode::Fixed { split, grid }
        }
        other => {
            return Err(ctx.err(
                p,
                format!("memory.patches is {other}"),
                format!("{HELP}, or leave it out for no patches"),
            ));
        }
    };
    Ok(Patches {
        mode,
        input,
        max_recompute,
        span: Some(ctx.span(p.span())),
    })
}

/// Turns a file stem into a Rust-identifier-friendly model name.
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

fn check_name(ctx: &Ctx<'_>, name: &Spanned<String>) -> Result<String> {
    let n = name.get_ref();
    let ok = !n.is_empty()
        && n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err(ctx.err(
            name,
            format!("model name {n:?} is not an identifier"),
            format!(
                "use letters, digits and `_`, starting with a letter, such as {:?}",
                sanitize_name(n)
            ),
        ));
    }
    Ok(n.clone())
}

/// The platform, and where each memory's size is written (the `preset` line for a preset).
fn check_platform(
    ctx: &Ctx<'_>,
    raw: Option<Spanned<RawPlatform>>,
) -> Result<(Platform, BTreeMap<String, Span>)> {
    let Some(raw) = raw else {
        let generic = Platform::preset("generic").unwrap_or_else(unreachable_platform);
        return Ok((generic, BTreeMap::new()));
    };
    let span = raw.span();
    let raw = raw.into_inner();
    let size_spans = match (&raw.preset, &raw.memories) {
        (Some(p), None) => Platform::preset(p.get_ref())
            .map(|pl| pl.memories)
            .unwrap_or_default()
            .into_iter()
            .map(|m| (m.name, ctx.span(p.span())))
            .collect(),
        (None, Some(mems)) => mems
            .iter()
            .filter_map(|m| {
                let m = m.get_ref();
                let size = m.size.as_ref()?;
                Some((m.name.get_ref().clone(), ctx.span(size.span())))
            })
            .collect(),
        _ => BTreeMap::new(),
    };
    let mut platform = match (&raw.preset, &raw.memories) {
        (Some(p), None) => Platform::preset(p.get_ref()).ok_or_else(|| {
            let hint = did_you_mean(p.get_ref(), Platform::PRESETS.iter().copied())
                .map(|s| format!("did you mean `{s}`? "))
                .unwrap_or_default();
            ctx.err(
                p,
                format!("unknown platform preset {:?}", p.get_ref()),
                format!("{hint}presets: {}", Platform::PRESETS.join(", ")),
            )
        })?,
        (None, Some(mems)) => {
            let mut memories: Vec<Memory> = Vec::new();
            for m in mems {
                let m = m.get_ref();
                let name = m.name.get_ref();
                if !is_memory_name(name) {
                    return Err(ctx.err(
                        &m.name,
                        format!("memory name {name:?} is not an identifier"),
                        "use letters, digits and `_`, such as \"DTCM\" or \"SRAM1\"",
                    ));
                }
                if memories.iter().any(|x| &x.name == name) {
                    return Err(ctx.err(
                        &m.name,
                        format!("memory {name} is defined twice"),
                        "give each memory its own name",
                    ));
                }
                // Generated statics, sections and files name a memory in lowercase words.
                let word = |n: &str| naming::arena_field(ArenaRole::Scratch, n);
                if let Some(x) = memories.iter().find(|x| word(&x.name) == word(name)) {
                    return Err(ctx.err(
                        &m.name,
                        format!(
                            "memories {} and {name} get the same name in generated code ({})",
                            x.name,
                            word(name)
                        ),
                        "give the memories names that differ in more than case and `_`",
                    ));
                }
                check_address_range(ctx, m)?;
                memories.push(Memory {
                    name: name.clone(),
                    size: m.size.as_ref().map(|s| s.get_ref().0),
                    writable: m.writable,
                    readable_in_place: m.readable_in_place,
                    origin: m.origin.as_ref().map(|s| s.get_ref().0),
                });
            }
            if memories.is_empty() {
                return Err(Error::input("platform.memories is empty")
                    .at(ctx.span(span))
                    .help("list at least one writable memory, or use `preset = \"generic\"`"));
            }
            Platform {
                name: "custom".to_string(),
                memories,
                min_alignment: 16,
            }
        }
        (Some(p), Some(_)) => {
            return Err(ctx.err(
                p,
                "platform has both `preset` and `memories`",
                "keep one: a preset by name, or your own list of memories",
            ));
        }
        (None, None) => {
            return Err(Error::input("platform has neither `preset` nor `memories`")
                .at(ctx.span(span))
                .help("add `preset = \"generic\"` (or another preset), or list `memories`"));
        }
    };
    if let Some(a) = &raw.min_alignment {
        platform.min_alignment = ctx.alignment(a, "platform.min_alignment")?;
    }
    if !platform.memories.iter().any(|m| m.writable) {
        return Err(Error::input("the platform has no writable memory")
            .at(ctx.span(span))
            .help("mark at least one memory `writable = true`; activations need one"));
    }
    Ok((platform, size_spans))
}

/// A memory with an `origin` must lie in the 32-bit address space of the targets.
fn check_address_range(ctx: &Ctx<'_>, m: &RawMemoryDef) -> Result<()> {
    const SPACE: u64 = 1 << 32;
    let Some(origin) = &m.origin else {
        return Ok(());
    };
    let start = origin.get_ref().0;
    let size = m.size.as_ref().map_or(0, |s| s.get_ref().0);
    if start.checked_add(size).is_none_or(|end| end > SPACE) || start >= SPACE {
        return Err(ctx.err(
            origin,
            format!(
                "memory {} at origin {start:#x} with {size} bytes ends past the 32-bit address space (0x1_0000_0000)",
                m.name.get_ref()
            ),
            format!(
                "lower the origin or the size so origin + size is at most {SPACE:#x}"
            ),
        ));
    }
    Ok(())
}

fn unreachable_platform() -> Platform {
    Platform {
        name: "generic".into(),
        memories: vec![
            mem("SRAM", None, true, None),
            mem("FLASH", None, false, None),
        ],
        min_alignment: 16,
    }
}

fn is_memory_name(s: &str) -> bool {
    !s.is_empty()
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn unknown_memory(ctx: &Ctx<'_>, platform: &Platform, name: &Spanned<String>, what: &str) -> Error {
    let names: Vec<&str> = platform.memories.iter().map(|m| m.name.as_str()).collect();
    let hint = did_you_mean(name.get_ref(), names.iter().copied())
        .map(|s| format!("did you mean `{s}`? "))
        .unwrap_or_default();
    ctx.err(
        name,
        format!(
            "{what} names memory {:?}, which platform {} does not have",
            name.get_ref(),
            platform.name
        ),
        format!("{hint}memories: {}", names.join(", ")),
    )
}

fn check_planner(
    ctx: &Ctx<'_>,
    planner: Option<&Spanned<String>>,
    options: Option<&Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
) -> Result<PlannerKind> {
    let name = planner.map_or(PlannerKind::default().name(), |p| p.get_ref().as_str());
    let mut opts = BTreeMap::new();
    if let Some(o) = options {
        for (k, v) in o.get_ref() {
            let value = match v.get_ref() {
                toml::Value::Integer(i) => OptionValue::Int(*i),
                toml::Value::String(s) => OptionValue::Str(s.clone()),
                toml::Value::Boolean(b) => OptionValue::Bool(*b),
                toml::Value::Float(f) => OptionValue::Float(*f),
                other => {
                    return Err(ctx.err(
                        v,
                        format!("planner option `{k}` is a {}", other.type_str()),
                        "give a number, a string or a boolean",
                    ));
                }
            };
            opts.insert(k.clone(), value);
        }
    }
    PlannerKind::from_name(name, &opts).map_err(|e| {
        let range = match (&e.key, options, planner) {
            (Some(k), Some(o), _) => o.get_ref().get(k).map_or(o.span(), |v| v.span()),
            (_, _, Some(p)) => p.span(),
            _ => 0..0,
        };
        let (message, help) = match e.message.split_once("; ") {
            Some((m, h)) => (m.to_string(), h.to_string()),
            None => (
                e.message.clone(),
                "see the planners and their options in docs/manifest.md".to_string(),
            ),
        };
        Error::input(message).at(ctx.span(range)).help(help)
    })
}

fn check_constraints(
    ctx: &Ctx<'_>,
    platform: &Platform,
    raw: &[Spanned<RawConstraint>],
) -> Result<Vec<MemoryConstraint>> {
    let mut out: Vec<MemoryConstraint> = Vec::new();
    for (i, c) in raw.iter().enumerate() {
        let c = c.get_ref();
        let what = format!("memory.constraints[{i}]");
        let Some(memory) = platform.memory(c.name.get_ref()) else {
            return Err(unknown_memory(ctx, platform, &c.name, &what));
        };
        if out.iter().any(|x| &x.name == c.name.get_ref()) {
            return Err(ctx.err(
                &c.name,
                format!("memory {} has two constraints", c.name.get_ref()),
                "merge them into one entry",
            ));
        }
        let max_size = match &c.max_size {
            Some(s) => {
                let v = s.get_ref().0;
                if let Some(size) = memory.size
                    && v > size
                {
                    return Err(ctx.err(
                        s,
                        format!(
                            "{what}.max_size is {v} bytes, but memory {} has only {size}",
                            memory.name
                        ),
                        format!("lower max_size to at most {size}, or fix the memory's size"),
                    ));
                }
                Some(v)
            }
            None => None,
        };
        let arena_alignment = match &c.arena_alignment {
            Some(a) => Some(ctx.alignment(a, &format!("{what}.arena_alignment"))?),
            None => None,
        };
        out.push(MemoryConstraint {
            name: memory.name.clone(),
            max_size,
            arena_alignment,
            app_bound: c.app_bound,
        });
    }
    Ok(out)
}

/// Checks the rules of `table` (`memory.tensors`, or a model's `rules`); their indices
/// start at `first`.
fn check_rules(
    ctx: &Ctx<'_>,
    platform: &Platform,
    raw: &[Spanned<RawRule>],
    (table, first): (&str, usize),
) -> Result<Vec<Rule>> {
    let mut out = Vec::new();
    for (i, r) in raw.iter().enumerate() {
        let span = r.span();
        let r = r.get_ref();
        let what = format!("{table}[{i}]");
        let rule_type = match &r.rule_type {
            None => RuleType::Any,
            Some(t) => match t.get_ref().as_str() {
                "*" => RuleType::Any,
                "constant" => RuleType::Role(ArenaRole::Constant),
                "persistent" => RuleType::Role(ArenaRole::Persistent),
                "scratch" => RuleType::Role(ArenaRole::Scratch),
                other => {
                    let hint = did_you_mean(other, ["constant", "persistent", "scratch"])
                        .map(|s| format!("did you mean `{s}`? "))
                        .unwrap_or_default();
                    return Err(ctx.err(
                        t,
                        format!("{what}.type is {other:?}"),
                        format!("{hint}use \"constant\", \"persistent\", \"scratch\" or \"*\""),
                    ));
                }
            },
        };
        let ids = r.id.as_ref().map(|id| match id.get_ref() {
            IdPattern::One(s) => vec![s.clone()],
            IdPattern::Many(v) => v.clone(),
        });
        if let (Some(ids), Some(id)) = (&ids, &r.id)
            && (ids.is_empty() || ids.iter().any(|s| s.is_empty()))
        {
            return Err(ctx.err(
                id,
                format!("{what}.id is empty"),
                "name a tensor id or name, a list of them, or a glob such as \"conv_*\"",
            ));
        }
        let (memory, dest) = match &r.attributes {
            None => (None, None),
            Some(a) => {
                let a = a.get_ref();
                (a.memory.as_ref(), a.constant_destination_memory.as_ref())
            }
        };
        if memory.is_none() && dest.is_none() {
            return Err(Error::input(format!("{what} has no `attributes`"))
                .at(ctx.span(span.clone()))
                .help("add `attributes = { memory = \"...\" }` (and for constants, optionally `constant_destination_memory`)"));
        }
        if let Some(m) = memory {
            let Some(mm) = platform.memory(m.get_ref()) else {
                return Err(unknown_memory(
                    ctx,
                    platform,
                    m,
                    &format!("{what}.attributes.memory"),
                ));
            };
            if let RuleType::Role(role @ (ArenaRole::Scratch | ArenaRole::Persistent)) = rule_type
                && !mm.writable
            {
                return Err(ctx.err(
                    m,
                    format!(
                        "{what} pins {} tensors to {}, which is read-only",
                        role.name(),
                        mm.name
                    ),
                    "pin them to a writable memory; only constants can live in read-only memory",
                ));
            }
        }
        if let Some(d) = dest {
            let Some(dm) = platform.memory(d.get_ref()) else {
                return Err(unknown_memory(
                    ctx,
                    platform,
                    d,
                    &format!("{what}.attributes.constant_destination_memory"),
                ));
            };
            if !dm.writable {
                return Err(ctx.err(
                    d,
                    format!("{what}.attributes.constant_destination_memory is {}, which is read-only", dm.name),
                    "stage constants into a writable memory (e.g. a TCM), or drop constant_destination_memory to read them in place",
                ));
            }
            if let RuleType::Role(role @ (ArenaRole::Scratch | ArenaRole::Persistent)) = rule_type {
                return Err(ctx.err(
                    d,
                    format!("{what} sets constant_destination_memory on {} tensors", role.name()),
                    "constant_destination_memory applies to constants only; use `memory` for other roles",
                ));
            }
        }
        out.push(Rule {
            index: first + i,
            rule_type,
            ids,
            memory: memory.map(|m| m.get_ref().clone()),
            constant_destination_memory: dest.map(|d| d.get_ref().clone()),
            span: Some(ctx.span(span)),
            label: (table != "memory.tensors").then(|| what.clone()),
        });
    }
    Ok(out)
}

fn check_slabs(
    ctx: &Ctx<'_>,
    platform: &Platform,
    raw: &[Spanned<RawSlab>],
) -> Result<Vec<SlabDef>> {
    let mut out: Vec<SlabDef> = Vec::new();
    for (i, s) in raw.iter().enumerate() {
        let s = s.get_ref();
        let what = format!("memory.slabs[{i}]");
        let name = s.name.get_ref();
        if !is_memory_name(name) {
            return Err(ctx.err(
                &s.name,
                format!("{what}.name {name:?} is not an identifier"),
                "use letters, digits and `_`, starting with a letter, such as \"preprocess\"",
            ));
        }
        if out.iter().any(|x| &x.name == name) {
            return Err(ctx.err(
                &s.name,
                format!("slab {name} is defined twice"),
                "give each slab its own name",
            ));
        }
        let Some(memory) = platform.memory(s.memory.get_ref()) else {
            return Err(unknown_memory(
                ctx,
                platform,
                &s.memory,
                &format!("{what}.memory"),
            ));
        };
        if !memory.writable {
            return Err(ctx.err(
                &s.memory,
                format!(
                    "{what} puts slab {name} in {}, which is read-only",
                    memory.name
                ),
                "a slab is written at run time: put it in a writable memory",
            ));
        }
        let role = match s.role.as_ref().map(|r| r.get_ref().as_str()) {
            None | Some("persistent") => ArenaRole::Persistent,
            Some("scratch") => ArenaRole::Scratch,
            Some(other) => {
                return Err(ctx.err(
                    s.role.as_ref().unwrap_or(&s.name),
                    format!("{what}.role is {other:?}"),
                    "use \"persistent\" (its own bytes) or \"scratch\" (shares the scratch arena between runs)",
                ));
            }
        };
        if s.size.get_ref().0 == 0 {
            return Err(ctx.err(
                &s.size,
                format!("{what}.size is 0"),
                "give the slab's size in bytes, such as \"4K\"",
            ));
        }
        let alignment = match &s.alignment {
            Some(a) => Some(ctx.alignment(a, &format!("{what}.alignment"))?),
            None => None,
        };
        out.push(SlabDef {
            name: name.clone(),
            size: s.size.get_ref().0,
            memory: memory.name.clone(),
            role,
            alignment,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::TensorKind;

    /// Parses and reads the inline graph, as `planner-build` does, so that inline-graph
    /// errors count too.
    fn parse(text: &str) -> Result<Manifest> {
        let m = Manifest::parse(text, Path::new("m.toml"))?;
        crate::import::load(&m)?;
        Ok(m)
    }

    fn err(text: &str) -> Error {
        match parse(text) {
            Ok(_) => panic!("expected an error for:\n{text}"),
            Err(e) => e,
        }
    }

    const GRAPH: &str = r#"
[model]
name = "m"
tensors = [
  { id = "in", dtype = "i8", shape = [1, 16] },
  { id = "w", dtype = "i8", shape = [16, 16], constant = true },
  { id = "out", dtype = "i8", shape = [1, 16] },
]
ops = [ { opcode = "FULLY_CONNECTED", inputs = ["in", "w"], outputs = ["out"] } ]
"#;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("512K"), Some(512 * 1024));
        assert_eq!(parse_size("4M"), Some(4 * 1024 * 1024));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("0x100"), Some(256));
        assert_eq!(parse_size("4KiB"), Some(4096));
        assert_eq!(parse_size("4X"), None);
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("99999999999999999999G"), None);
    }

    #[test]
    fn globs() {
        assert!(glob_match("conv_*", "conv_0/weights"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(glob_match("*/out", "conv/3/out"));
        assert!(!glob_match("conv", "conv_0"));
    }

    #[test]
    fn inline_graph_defaults() {
        let m = parse(GRAPH).unwrap();
        let g = crate::import::load(&m).unwrap();
        assert_eq!(g.tensors.len(), 3);
        assert_eq!(g.tensors[1].kind, TensorKind::Constant);
        assert_eq!(g.tensors[1].size, 256);
        assert_eq!(g.inputs[0].name, "in");
        assert_eq!(g.outputs[0].name, "out");
        assert_eq!(m.platform.name, "generic");
        assert_eq!(m.planner, PlannerKind::default());
    }

    #[test]
    fn unknown_key_has_did_you_mean_and_position() {
        let e = err(&format!("{GRAPH}\n[memory]\nplannr = \"greedy\"\n"));
        assert!(
            e.message().contains("unknown field `plannr`"),
            "{}",
            e.message()
        );
        assert_eq!(e.help_text(), Some("did you mean `planner`?"));
        let (_, line, col) = e.location().unwrap();
        assert_eq!((line, col), (12, 1));
        assert!(e.to_string().contains("m.toml:12:1"), "{e}");
    }

    #[test]
    fn unknown_memory_in_constraint() {
        let e = err(&format!(
            "{GRAPH}\n[platform]\npreset = \"mps3-an547\"\n[memory]\nconstraints = [{{ name = \"DTMC\" }}]\n"
        ));
        assert!(e.message().contains("\"DTMC\""), "{}", e.message());
        assert!(e.help_text().unwrap().contains("did you mean `DTCM`?"));
        assert_eq!(e.location().unwrap().1, 14);
    }

    #[test]
    fn a_second_constraint_on_one_memory_is_refused() {
        let e = err(&format!(
            "{GRAPH}\n[platform]\npreset = \"mps3-an547\"\n[memory]\nconstraints = [\n  {{ name = \"DTCM\", max_size = 4096 }},\n  {{ name = \"DTCM\", arena_alignment = 32 }},\n]\n"
        ));
        assert_eq!(e.message(), "memory DTCM has two constraints");
        assert_eq!(e.help_text(), Some("merge them into one entry"));
        let (_, line, col) = e.location().unwrap();
        assert_eq!((line, col), (16, 12));
    }

    #[test]
    fn non_power_of_two_alignment() {
        let e = err(&format!(
            "{GRAPH}\n[platform]\npreset = \"generic\"\nmin_alignment = 12\n"
        ));
        assert!(
            e.message().contains("platform.min_alignment is 12"),
            "{}",
            e.message()
        );
        assert_eq!(e.location().unwrap().1, 13);
        let e = err(&format!(
            "{GRAPH}\n[platform]\npreset = \"mps3-an547\"\n[memory]\nconstraints = [{{ name = \"DTCM\", arena_alignment = 24 }}]\n"
        ));
        assert!(
            e.message().contains("arena_alignment is 24"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn max_size_beyond_memory() {
        let e = err(&format!(
            "{GRAPH}\n[platform]\npreset = \"mps3-an547\"\n[memory]\nconstraints = [{{ name = \"DTCM\", max_size = \"1M\" }}]\n"
        ));
        assert!(
            e.message()
                .contains("max_size is 1048576 bytes, but memory DTCM has only 524288"),
            "{}",
            e.message()
        );
        assert_eq!(e.location().unwrap(), (PathBuf::from("m.toml"), 14, 44));
    }

    #[test]
    fn scratch_pinned_to_read_only() {
        let e = err(&format!(
            "{GRAPH}\n[memory]\ntensors = [{{ type = \"scratch\", attributes = {{ memory = \"FLASH\" }} }}]\n"
        ));
        assert!(
            e.message()
                .contains("pins scratch tensors to FLASH, which is read-only"),
            "{}",
            e.message()
        );
        assert_eq!(e.location().unwrap().1, 12);
    }

    #[test]
    fn read_only_destination() {
        let e = err(&format!(
            "{GRAPH}\n[memory]\ntensors = [{{ type = \"constant\", attributes = {{ memory = \"SRAM\", constant_destination_memory = \"FLASH\" }} }}]\n"
        ));
        assert!(
            e.message()
                .contains("constant_destination_memory is FLASH, which is read-only"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn bad_planner_and_options() {
        let e = err(&format!("{GRAPH}\n[memory]\nplanner = \"hill_climbing\"\n"));
        assert!(
            e.message().contains("unknown planner `hill_climbing`"),
            "{}",
            e.message()
        );
        assert_eq!(e.location().unwrap().1, 12);
        let e = err(&format!(
            "{GRAPH}\n[memory]\nplanner = \"greedy\"\nplanner_options = {{ iterations = 3 }}\n"
        ));
        assert!(
            e.message().contains("planner `greedy` takes no options"),
            "{}",
            e.message()
        );
        assert_eq!(e.location().unwrap().1, 13);
        let e = err(&format!(
            "{GRAPH}\n[memory]\nplanner = \"hill_climb\"\nplanner_options = {{ iterations = -3 }}\n"
        ));
        assert!(
            e.message().contains("`iterations` is -3"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn bad_sizes_and_types() {
        let e = err(&format!(
            "{GRAPH}\n[platform]\nmemories = [{{ name = \"RAM\", size = \"12Q\", writable = true }}]\n"
        ));
        assert!(
            e.message().contains("\"12Q\" is not a byte count"),
            "{}",
            e.message()
        );
        assert_eq!(e.location().unwrap().1, 12);
        let e = err(&GRAPH.replace(
            "dtype = \"i8\", shape = [1, 16] }",
            "dtype = \"i88\", shape = [1, 16] }",
        ));
        assert!(
            e.message().contains("unknown dtype \"i88\""),
            "{}",
            e.message()
        );
        assert!(e.help_text().unwrap().contains("did you mean `i8`?"));
        let e = err(&GRAPH.replace("inputs = [\"in\", \"w\"]", "inputs = [\"inn\", \"w\"]"));
        assert!(
            e.message().contains("names tensor \"inn\""),
            "{}",
            e.message()
        );
        assert_eq!(e.location().unwrap().1, 9);
    }

    #[test]
    fn budget_is_min_of_memory_and_constraint() {
        let m = parse(&format!(
            "{GRAPH}\n[platform]\npreset = \"mps3-an547\"\n[memory]\nconstraints = [{{ name = \"DTCM\", max_size = \"128K\", arena_alignment = 32 }}, {{ name = \"SRAM\" }}]\n"
        ))
        .unwrap();
        assert_eq!(m.budget("DTCM"), Some(128 * 1024));
        assert_eq!(m.budget("SRAM"), Some(2 * 1024 * 1024));
        assert_eq!(m.memory_alignment("DTCM"), 32);
        assert_eq!(m.memory_alignment("SRAM"), 16);
        let banks: Vec<&str> = m.scratch_banks().iter().map(|b| b.name.as_str()).collect();
        assert_eq!(banks, ["DTCM", "SRAM"]);
    }
}
