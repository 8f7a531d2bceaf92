//! The pure part: manifest, graph and plan in, every output file's bytes out. Nothing here
//! touches the file system or prints.

use std::collections::BTreeMap;

use planner::manifest::{Group, Manifest};
use planner::planfile::group::{BuildGroupPlanFile, GroupPlanFile};
use planner::planfile::patch::PatchInput;
use planner::planfile::{Blobs, BuildPlanFile, Layout, PlanFile, naming};
use planner::{Error, GroupPlanned, Planned};

use crate::memory_x::{self, MemoryXLayout};
use crate::unit_plan::UnitPlan;
use crate::{header, linker};

/// Which outputs to make besides the plan file and blobs (which the macro always needs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Make the linker-script fragment.
    pub linker_fragment: bool,
    /// Make the C header.
    pub c_header: bool,
    /// Linker region for each memory whose region is named otherwise.
    pub regions: BTreeMap<String, String>,
    /// Place each output section in its memory's region (`> REGION`); off for hosts,
    /// whose default linker script has no `MEMORY` block.
    pub place_in_regions: bool,
    /// Draw the plan as `<model>.svg` ([`planner::export::svg`]).
    pub svg: bool,
    /// Write `memory.x` from the manifest's memories, with these memories as cortex-m-rt's
    /// `FLASH` and `RAM` regions (the linker fragment then uses those region names too).
    pub memory_x: Option<MemoryXLayout>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            linker_fragment: true,
            c_header: true,
            regions: BTreeMap::new(),
            place_in_regions: true,
            svg: false,
            memory_x: None,
        }
    }
}

/// Everything one build produces: of a model (`P` = [`PlanFile`]) or of a group
/// ([`GeneratedGroup`]).
#[derive(Debug, Clone)]
pub struct Generated<P = PlanFile> {
    /// The plan file's content.
    pub plan: P,
    /// Output files by name: plan file, blobs, linker fragment, C header(s).
    pub files: BTreeMap<String, Vec<u8>>,
    /// The planner's warnings and the blob layout's.
    pub warnings: Vec<String>,
    /// The plan hash.
    pub plan_hash: u64,
}

/// Everything a group's build produces: the group plan file, the group's blobs, the linker
/// fragment, one C header per model.
pub type GeneratedGroup = Generated<GroupPlanFile>;

/// Refuses a region name ([`crate::Builder::region`]) that is not one linker-script name
/// token: it is written into the linker fragment as is.
fn check_regions(options: &Options) -> Result<(), Error> {
    for (memory, region) in &options.regions {
        if !crate::escape::is_linker_name(region) {
            return Err(Error::invalid_input(format!(
                "Builder::region maps memory {memory:?} to region {region:?}, which is not a linker region name; use letters, digits and `_`, starting with a letter or `_`, as memory.x names the region"
            )));
        }
    }
    Ok(())
}

/// Refuses a plan made without patches for a manifest that asks for a streamed input
/// (`memory.patch_input = "streamed"`): the generated code would have no `run_streamed`,
/// and the firmware's call to it would fail to compile far from the cause. Says why the
/// planner planned without patches (its warning) and what would fix it.
fn check_streamed(manifest: &Manifest, planned: &Planned) -> Result<(), Error> {
    if manifest.patches.input != PatchInput::Streamed || planned.graph.patches.is_some() {
        return Ok(());
    }
    let why = planned
        .graph
        .warnings
        .iter()
        .chain(&planned.warnings)
        .find(|w| w.contains("memory.patches"))
        .map_or_else(
            || "the planner found no patch plan".to_string(),
            |w| format!("the planner said: {w}"),
        );
    Err(Error::invalid_input(format!(
        "{}: memory.patch_input = \"streamed\" asks for `run_streamed()`, but model `{}` was planned without patches, so its generated code has no `run_streamed` ({why}); remove patch_input (and call `run()`), or raise max_recompute or name a split op that can end a stage",
        manifest.path.display(),
        planned.model
    )))
}

/// The platform facts the plan file records that the `MemoryPlan` does not.
pub(crate) fn layout(manifest: &Manifest) -> Layout {
    Layout::of(manifest)
}

/// Memories holding an arena or a blob of `plan`.
pub(crate) fn used_memories(plan: &impl UnitPlan) -> std::collections::BTreeSet<String> {
    plan.arena_entries()
        .into_iter()
        .flat_map(|a| [a.memory.clone(), a.source_memory.clone()])
        .collect()
}

/// Computes every output of one model from its plan: same inputs, same bytes. The graph is
/// the one the plan was made for (`planned.graph`: ops in the planned order, aliases and
/// slabs added), not the imported one.
pub fn generate(
    manifest: &Manifest,
    planned: &Planned,
    options: &Options,
) -> Result<Generated, Error> {
    check_regions(options)?;
    check_streamed(manifest, planned)?;
    let plan = PlanFile::from_plan(&planned.graph, &planned.plan, &layout(manifest))?;
    let blobs = plan.blobs(&planned.graph)?;
    let source = manifest.path.display().to_string();
    generate_unit(plan, blobs, manifest, &source, &[planned], None, options)
}

/// Computes every output of a group from its plan: `<group>.plan.json` (every model's plan
/// inside), `<group>.constant.<memory>.bin` per constant arena, `planner_<group>.x` (one
/// section per group arena), `planner_<model>.h` per model (its regions are the group
/// arenas it uses) and, when asked, `<model>.svg` per model, `<group>.svg` (the group's
/// arenas, models side by side; `<group>.group.svg` when a model has the group's name) and
/// `memory.x`.
pub fn generate_group(
    group: &Group,
    planned: &GroupPlanned,
    options: &Options,
) -> Result<GeneratedGroup, Error> {
    check_regions(options)?;
    for (manifest, model) in group.models.iter().zip(&planned.models) {
        check_streamed(manifest, model)?;
    }
    let layouts: Vec<Layout> = group.models.iter().map(Layout::of).collect();
    let (plan, blobs) = GroupPlanFile::from_group(planned, &layouts)?;
    let Some(first) = group.models.first() else {
        return Err(Error::invalid_input(format!(
            "group {} in {} lists no model; add a [[model]] table",
            group.name,
            group.path.display()
        )));
    };
    let source = group.path.display().to_string();
    let models: Vec<&Planned> = planned.models.iter().collect();
    generate_unit(plan, blobs, first, &source, &models, Some(planned), options)
}

/// Every output of a unit (a model, or a group of models over shared arenas) from its plan
/// file and blobs: the plan file, one blob per constant arena, `memory.x` (from `manifest`,
/// a group's first model's), the linker fragment, one C header and SVG per model, and a
/// group's own SVG.
fn generate_unit<P: UnitPlan>(
    plan: P,
    blobs: Blobs,
    manifest: &Manifest,
    source: &str,
    models: &[&Planned],
    group: Option<&GroupPlanned>,
    options: &Options,
) -> Result<Generated<P>, Error> {
    let name = plan.name().to_string();
    let mut files = BTreeMap::new();
    files.insert(naming::plan_file(&name), plan.to_bytes());
    let arenas = plan.arena_entries();
    for (a, bytes) in blobs.blobs {
        if let Some(blob) = arenas.get(a).and_then(|e| e.blob.as_ref()) {
            files.insert(blob.file.clone(), bytes);
        }
    }
    let mut options = options.clone();
    if let Some(layout) = &options.memory_x {
        options.regions = memory_x::regions_for(layout, &options.regions);
        let used = used_memories(&plan);
        let text = memory_x::write(manifest, &name, layout, &options.regions, &used)?;
        files.insert("memory.x".to_string(), text.into_bytes());
    }
    if options.linker_fragment {
        files.insert(
            naming::linker_file(&name),
            linker::fragment(&plan, source, &options).into_bytes(),
        );
    }
    for (file, model) in plan.model_files().into_iter().zip(models) {
        if options.svg {
            files.insert(
                format!("{}.svg", file.model),
                planner::export::svg::svg(model).into_bytes(),
            );
        }
        if options.c_header {
            files.insert(
                naming::header_file(&file.model),
                header::header(file, source).into_bytes(),
            );
        }
    }
    if let (true, Some(group)) = (options.svg, group) {
        let file = if plan.model_files().iter().any(|m| m.model == name) {
            format!("{name}.group.svg")
        } else {
            format!("{name}.svg")
        };
        files.insert(file, planner::export::svg::group_svg(group).into_bytes());
    }
    let mut warnings = Vec::new();
    for m in models {
        warnings.extend(m.graph.warnings.iter().cloned());
        warnings.extend(m.warnings.iter().cloned());
    }
    warnings.extend(blobs.warnings);
    Ok(Generated {
        plan_hash: plan.hash(),
        plan,
        files,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const MANIFEST: &str = r#"
[model]
name = "det"
tensors = [
  { id = "x", dtype = "i8", shape = [1, 64] },
  { id = "w", dtype = "i8", shape = [64, 64], constant = true },
  { id = "h", dtype = "i8", shape = [1, 64] },
  { id = "y", dtype = "i8", shape = [1, 64] },
]
ops = [
  { opcode = "FULLY_CONNECTED", inputs = ["x", "w"], outputs = ["h"] },
  { opcode = "RELU", inputs = ["h"], outputs = ["y"] },
]

[platform]
preset = "mps3-an547"

[memory]
planner = "hill_climb"
planner_options = { iterations = 50, seed = 3 }
constraints = [{ name = "DTCM", max_size = "8K" }, { name = "SRAM" }]
tensors = [{ type = "constant", attributes = { memory = "FLASH", constant_destination_memory = "DTCM" } }]
"#;

    fn run() -> Generated {
        let manifest = Manifest::parse(MANIFEST, Path::new("det.toml")).unwrap();
        let graph = planner::import::load(&manifest).unwrap();
        let planned = planner::plan_graph(&manifest, &graph).unwrap();
        generate(&manifest, &planned, &Options::default()).unwrap()
    }

    #[test]
    fn same_input_same_bytes() {
        let (a, b) = (run(), run());
        assert_eq!(a.files, b.files);
        let names: Vec<&str> = a.files.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "det.constant.dtcm.bin",
                "det.plan.json",
                "planner_det.h",
                "planner_det.x"
            ]
        );
        // The staged blob goes to FLASH under its own section, the copy to DTCM.
        let x = std::str::from_utf8(&a.files["planner_det.x"]).unwrap();
        assert!(
            x.contains("KEEP(*(.rodata.planner.det.constant.flash.to_dtcm));"),
            "{x}"
        );
        assert!(
            x.contains("KEEP(*(.bss.planner.det.constant.dtcm));"),
            "{x}"
        );
        let h = std::str::from_utf8(&a.files["planner_det.h"]).unwrap();
        assert!(
            h.contains(&format!("UINT64_C(0x{:016x})", a.plan_hash)),
            "{h}"
        );
        assert!(
            a.warnings.iter().any(|w| w.contains("staged")),
            "{:?}",
            a.warnings
        );
        // Constants declared without data: zero blob and a warning naming the tensor.
        assert!(
            a.warnings.iter().any(|w| w.contains("`w`")),
            "{:?}",
            a.warnings
        );
    }
}
