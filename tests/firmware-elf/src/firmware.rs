//! The whole check of one firmware, as the `firmware-elf-check` binary runs it: read the
//! image, the linker scripts' `MEMORY` blocks and every plan file of the firmware's
//! `OUT_DIR`, map each planned memory onto the linker region that holds it, and [`check`].
//!
//! ```no_run
//! use firmware_elf::firmware::{CheckOptions, check_firmware};
//!
//! let mut options = CheckOptions::new("target/thumbv8m.main-none-eabihf/release/app");
//! options.scripts.push("memory.x".into());
//! options.plan_dir = Some("target/thumbv8m.main-none-eabihf/release/build/app-1234/out".into());
//! // The manifest's memory DTCM is cortex-m-rt's region RAM in this memory.x.
//! options.regions.insert("DTCM".into(), "RAM".into());
//! match check_firmware(&options) {
//!     Ok(summary) => println!("{summary}"),
//!     Err(e) => eprintln!("{e}"),
//! }
//! ```
//!
//! # Memories and regions
//!
//! A plan names memories (`DTCM`, `SRAM`, `FLASH`), the linker script regions. They are the
//! same names unless the build maps them (`Builder::region("DTCM", "RAM")`, or the
//! `memory.x` that `Builder::write_memory_x` writes, which makes two memories cortex-m-rt's
//! `FLASH` and `RAM`). The region of each arena is, in this order: the one
//! [`CheckOptions::regions`] gives its memory (`--region DTCM=RAM`); the one the linker
//! fragment in the plan directory places its output section in (`} > RAM`), so a firmware
//! built by `planner-build` needs no mapping; the memory's own name.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use crate::plan::{self, ModelArenas};
use crate::{ArenaReport, ExpectedArena, Region, check, memory_regions};

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The linked firmware image (ELF32, little-endian).
    pub elf: PathBuf,
    /// Linker scripts whose `MEMORY` blocks declare the regions (`memory.x`); the `.x`
    /// files of `plan_dir` are read too.
    pub scripts: Vec<PathBuf>,
    /// The firmware's `OUT_DIR` or its `planner` folder ([`crate::plan::plan_dir`]): every
    /// `*.plan.json` there, the blobs beside them, and the linker fragments.
    pub plan_dir: Option<PathBuf>,
    /// Memory name -> linker region name, for memories whose region has another name.
    pub regions: BTreeMap<String, String>,
}

impl CheckOptions {
    /// Options for the image `elf`, with no script, plan directory or mapping yet.
    pub fn new(elf: impl Into<PathBuf>) -> CheckOptions {
        CheckOptions {
            elf: elf.into(),
            ..CheckOptions::default()
        }
    }
}

/// A firmware that passed: where every arena landed.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The image checked.
    pub elf: PathBuf,
    /// Every plan file's arenas (a group's plan file counts once, with all its models).
    pub plans: Vec<ModelArenas>,
    /// One report per arena, in plan order.
    pub reports: Vec<ArenaReport>,
    /// Memory -> region, for each memory whose region has another name.
    pub mapped: BTreeMap<String, String>,
}

impl Summary {
    /// The number of models over all plan files.
    pub fn models(&self) -> usize {
        self.plans.iter().map(|p| p.models.len()).sum()
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self
            .plans
            .iter()
            .flat_map(|p| p.models.iter().map(String::as_str))
            .collect();
        write!(
            f,
            "firmware-elf-check: {} ok: {} of {} ({}) from {} in their planned regions",
            self.elf.display(),
            plural(self.reports.len(), "arena", "arenas"),
            plural(self.models(), "model", "models"),
            names.join(", "),
            plural(self.plans.len(), "plan file", "plan files"),
        )?;
        for (memory, region) in &self.mapped {
            write!(f, "\n  memory {memory} is region {region}")?;
        }
        for r in &self.reports {
            write!(f, "\n  {r}")?;
        }
        for note in self.plans.iter().flat_map(|m| &m.notes) {
            write!(f, "\n  {note}")?;
        }
        Ok(())
    }
}

/// `MEMORY=REGION` of `--region`.
pub fn parse_mapping(text: &str) -> Result<(String, String), String> {
    let (memory, region) = text.split_once('=').ok_or_else(|| {
        format!("--region {text:?} is not MEMORY=REGION; write the plan's memory and the linker script's region, such as DTCM=RAM")
    })?;
    let (memory, region) = (memory.trim(), region.trim());
    if memory.is_empty() || region.is_empty() {
        return Err(format!(
            "--region {text:?} has an empty name; write the plan's memory and the linker script's region, such as DTCM=RAM"
        ));
    }
    Ok((memory.to_string(), region.to_string()))
}

/// The region each output section of a linker fragment is placed in (`.sec : ... } > R`):
/// output section name -> region name.
pub fn section_regions(script: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in script.lines() {
        let t = line.trim();
        if t.starts_with('.') && t.contains(':') {
            current = t.split_whitespace().next().map(str::to_string);
        }
        if let Some(rest) = t.strip_prefix('}')
            && let Some(region) = rest.trim().strip_prefix('>')
            && let Some(section) = current.take()
        {
            let region = region.split_whitespace().next().unwrap_or("");
            if !region.is_empty() {
                out.insert(section, region.to_string());
            }
        }
    }
    out
}

/// Sets each arena's region: `regions` (memory -> region) first, then the region its
/// section is placed in by a fragment (`placed`), else the memory's own name. Returns the
/// memories whose region got another name.
pub fn map_regions(
    arenas: &mut [ExpectedArena],
    regions: &BTreeMap<String, String>,
    placed: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut mapped = BTreeMap::new();
    for a in arenas {
        let region = regions
            .get(&a.region)
            .or_else(|| placed.get(&a.section))
            .cloned();
        if let Some(region) = region
            && region != a.region
        {
            mapped.insert(a.region.clone(), region.clone());
            a.region = region;
        }
    }
    mapped
}

/// Runs the whole check; the error lists every violation, each with its fix.
pub fn check_firmware(options: &CheckOptions) -> Result<Summary, String> {
    let elf = std::fs::read(&options.elf).map_err(|e| {
        format!(
            "cannot read firmware image {}: {e}; build the firmware first",
            options.elf.display()
        )
    })?;
    let mut scripts = options.scripts.clone();
    let mut plans = Vec::new();
    if let Some(dir) = &options.plan_dir {
        let dir = &plan::plan_dir(dir)?;
        let files = plan::find(dir)?;
        for p in &files {
            plans.push(plan::load(p)?);
        }
        // Fragments may declare MEMORY regions of their own, and say where sections go.
        let mut fragments = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            if path.extension().is_some_and(|x| x == "x") {
                fragments.push(path);
            }
        }
        fragments.sort();
        scripts.extend(fragments);
    }
    if scripts.is_empty() {
        return Err(
            "no linker script given, so no memory regions to check against; pass --script memory.x"
                .to_string(),
        );
    }
    let mut regions: Vec<Region> = Vec::new();
    let mut placed = BTreeMap::new();
    for script in &scripts {
        let text = std::fs::read_to_string(script)
            .map_err(|e| format!("cannot read linker script {}: {e}", script.display()))?;
        placed.extend(section_regions(&text));
        for region in memory_regions(&text).map_err(|e| format!("{}: {e}", script.display()))? {
            if let Some(old) = regions.iter().find(|r| r.name == region.name) {
                if *old != region {
                    return Err(format!(
                        "memory region {} is declared twice, differently ({:?} and {:?}); keep one",
                        region.name, old, region
                    ));
                }
            } else {
                regions.push(region);
            }
        }
    }
    for (memory, region) in &options.regions {
        if !regions.iter().any(|r| &r.name == region) {
            let names: Vec<&str> = regions.iter().map(|r| r.name.as_str()).collect();
            return Err(format!(
                "--region {memory}={region} names region {region}, but the linker scripts declare {}; name one of those",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ));
        }
    }
    let mut arenas: Vec<ExpectedArena> = plans.iter().flat_map(|m| m.arenas.clone()).collect();
    let mapped = map_regions(&mut arenas, &options.regions, &placed);
    let reports =
        check(&elf, &regions, &arenas).map_err(|v| format!("{}:\n{v}", options.elf.display()))?;
    Ok(Summary {
        elf: options.elf.clone(),
        plans,
        reports,
        mapped,
    })
}
