//! The linker-script fragment: one output section per arena in the region of its memory,
//! `NOLOAD` for zero-filled arenas, `KEEP` so nothing is collected, start and end symbols,
//! and `ASSERT`s whose messages say what to change.

use std::fmt::Write as _;

use planner::planfile::{ArenaEntry, naming};

use crate::Options;
use crate::escape;
use crate::unit_plan::UnitPlan;

/// `ASSERT(cond, "message")`, the message written by [`escape::text`]: names from the
/// manifest and the model's path reach it, and no quote or backslash in them may end the
/// string early.
fn assert(cond: &str, message: &str) -> String {
    format!("ASSERT({cond}, \"{}\");", escape::text(message))
}

/// The fragment's text, to `INCLUDE` from `memory.x` after its `MEMORY` block: one
/// section per arena of a model, or per group arena (shared by the group's models).
pub(crate) fn fragment(plan: &impl UnitPlan, source: &str, options: &Options) -> String {
    sections(
        &plan.owner(),
        &plan.arena_entries(),
        plan.plan_hash(),
        source,
        options,
        plan.take(),
    )
}

/// The fragment for `arenas` of `owner` ("model kws", "group sensors"); `take` names the
/// call that makes a binary use the statics.
fn sections(
    owner: &str,
    arenas: &[&ArenaEntry],
    hash: &str,
    source: &str,
    options: &Options,
    take: &str,
) -> String {
    let regions = &options.regions;
    let region = |memory: &str| {
        regions
            .get(memory)
            .cloned()
            .unwrap_or_else(|| memory.to_string())
    };
    let mut zeroed = String::new();
    let mut loaded = String::new();
    let mut asserts = String::new();
    for arena in arenas {
        let mut sections = Vec::new();
        if let Some(section) = &arena.section {
            sections.push((
                section.clone(),
                arena.memory.clone(),
                true,
                format!("arena {}", arena.name),
            ));
        }
        if let Some(blob) = &arena.blob {
            sections.push((
                blob.section.clone(),
                arena.source_memory.clone(),
                false,
                format!("blob of arena {}", arena.name),
            ));
        }
        for (section, memory, nobits, what) in &sections {
            let (memory, nobits) = (memory.as_str(), *nobits);
            let out = naming::output_section(section);
            let start = naming::linker_symbol(section, false);
            let end = naming::linker_symbol(section, true);
            let target = if nobits { &mut zeroed } else { &mut loaded };
            let _ = write!(
                target,
                "  {out}{noload} : ALIGN({align})\n  {{\n    {start} = .;\n    KEEP(*({section}));\n    {end} = .;\n  }}{place}\n",
                noload = if nobits { " (NOLOAD)" } else { "" },
                align = arena.alignment,
                place = if options.place_in_regions {
                    format!(" > {}", region(memory))
                } else {
                    String::new()
                },
            );
            // A Rust type's size is a multiple of its alignment, so the static is the
            // arena's size rounded up to its alignment.
            let padded = planner::plan::align_up(arena.size, arena.alignment).unwrap_or(arena.size);
            let _ = writeln!(
                asserts,
                "{}",
                assert(
                    &format!("{end} - {start} == {padded}"),
                    &format!(
                        "planner: the {what} of {owner} should take {padded} bytes ({size} rounded up to its {align}-byte alignment) but its section {section} does not; the binary was built from another plan or does not use the model, rebuild (cargo clean -p <your crate>) and call {take}",
                        size = arena.size,
                        align = arena.alignment,
                    )
                )
            );
            let _ = writeln!(
                asserts,
                "{}",
                assert(
                    &format!("{start} % {align} == 0", align = arena.alignment),
                    &format!(
                        "planner: the {what} of {owner} must start on a {align}-byte boundary; align region {region} or the sections before it",
                        align = arena.alignment,
                        region = region(memory),
                    )
                )
            );
            if let Some(budget) = arena.budget.filter(|_| nobits || !arena.is_staged()) {
                let _ = writeln!(
                    asserts,
                    "{}",
                    assert(
                        &format!("{end} - {start} <= {budget}"),
                        &format!(
                            "planner: arena {name} of {owner} is over its budget of {budget} bytes; raise max_size of {memory} in the manifest",
                            name = arena.name,
                        )
                    )
                );
            }
        }
    }
    let mut out = format!(
        "/* @generated by planner-build from {}; plan {}. Do not edit. */\n/* INCLUDE this file from memory.x after its MEMORY block. Regions are the manifest's memory names unless Builder::region maps them. */\n",
        escape::text(source),
        escape::text(hash),
    );
    if !zeroed.is_empty() {
        // Before `.bss`, not after: cortex-m-rt sets `__ebss` from the location counter that
        // follows `.bss`, which a section of another region placed right after it would move
        // into that region, and its start-up code would then zero past the end of RAM.
        let _ = write!(out, "\nSECTIONS\n{{\n{zeroed}}}\nINSERT BEFORE .bss;\n");
    }
    if !loaded.is_empty() {
        let _ = write!(out, "\nSECTIONS\n{{\n{loaded}}}\nINSERT AFTER .rodata;\n");
    }
    out.push('\n');
    out.push_str(&asserts);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use planner::planfile::tiny_plan_file;

    #[test]
    fn one_section_per_arena_with_symbols_and_asserts() {
        let plan = tiny_plan_file().unwrap();
        let mut options = Options::default();
        options
            .regions
            .insert("SRAM".to_string(), "RAM".to_string());
        let x = fragment(&plan, "tiny.toml", &options);
        for want in [
            ".planner.tiny.scratch.sram (NOLOAD) : ALIGN(16)",
            "KEEP(*(.bss.planner.tiny.scratch.sram));",
            "} > RAM",
            ".planner.tiny.constant.flash : ALIGN(16)",
            "KEEP(*(.rodata.planner.tiny.constant.flash));",
            "} > FLASH",
            "ASSERT(__planner_tiny_scratch_sram_end - __planner_tiny_scratch_sram_start == 32,",
            "<= 1024, \"planner: arena scratch.SRAM of model tiny is over its budget",
            "INSERT BEFORE .bss;",
            "INSERT AFTER .rodata;",
        ] {
            assert!(x.contains(want), "{want:?} is not in:\n{x}");
        }
        assert_eq!(x, fragment(&plan, "tiny.toml", &options));
        options.place_in_regions = false;
        let host = fragment(&plan, "tiny.toml", &options);
        assert!(!host.contains("} > "), "{host}");
    }
}
