//! The example binary, read back with `object`: each arena is a symbol in the section the
//! plan names, with the plan's size and alignment. The binary is linked with the generated
//! linker fragment, so each arena's input section (`.bss.planner.hello_world.scratch.dtcm`)
//! lands in its own output section (`.planner.hello_world.scratch.dtcm`) between the
//! fragment's start and end symbols.

use object::{Object, ObjectSection, ObjectSymbol, SectionKind};

use host::hello_world::PLAN;

#[test]
fn arena_symbols_sit_in_their_sections_with_plan_size_and_alignment() {
    let path = env!("CARGO_BIN_EXE_host");
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    if file.format() != object::BinaryFormat::Elf {
        // Section names are ELF names; other formats get no link_section.
        return;
    }
    let plan_text = std::str::from_utf8(host::hello_world::PLAN_FILE).unwrap();
    let plan = planner::planfile::PlanFile::parse(plan_text, "plan").unwrap();
    let mut checked = 0;
    for (a, arena) in plan.arenas.iter().enumerate() {
        let row = &PLAN.arenas[a];
        let mut expect = Vec::new();
        if let Some(section) = &arena.section {
            let name = planner::planfile::naming::arena_static(arena.role, &arena.memory);
            expect.push((name, section.clone(), true));
        }
        if let Some(blob) = &arena.blob {
            let name = planner::planfile::naming::blob_static(&arena.memory);
            expect.push((name, blob.section.clone(), false));
        }
        for (name, section, zeroed) in expect {
            // Mangled Rust names hold each path segment as <len><segment>.
            let needle = format!("{}{}", name.len(), name);
            let sym = file
                .symbols()
                .find(|s| {
                    s.name()
                        .is_ok_and(|n| n.contains("hello_world") && n.contains(&needle))
                })
                .unwrap_or_else(|| panic!("no symbol for {name}"));
            // A Rust static's size is a multiple of its alignment.
            let padded = planner::plan::align_up(arena.size, arena.alignment).unwrap();
            let sec = file.section_by_index(sym.section_index().unwrap()).unwrap();
            let output = planner::planfile::naming::output_section(&section);
            assert_eq!(sec.name().unwrap(), output, "{name}");
            let symbol = |end| {
                let want = planner::planfile::naming::linker_symbol(&section, end);
                file.symbols()
                    .find(|s| s.name() == Ok(want.as_str()))
                    .unwrap_or_else(|| panic!("no linker symbol {want}"))
                    .address()
            };
            assert_eq!(symbol(false), sym.address(), "{name} starts its section");
            assert_eq!(
                symbol(true),
                sym.address() + padded,
                "{name} ends its section"
            );
            assert_eq!(row.size, arena.size, "{name}");
            assert_eq!(
                sym.size(),
                padded,
                "{name}: plan size {} aligned to {}",
                arena.size,
                arena.alignment
            );
            assert_eq!(
                sym.address() % arena.alignment,
                0,
                "{name} at {:#x}",
                sym.address()
            );
            if zeroed {
                assert_eq!(
                    sec.kind(),
                    SectionKind::UninitializedData,
                    "{section} costs file bytes"
                );
            } else {
                assert_eq!(sec.kind(), SectionKind::ReadOnlyData, "{section}");
            }
            checked += 1;
        }
    }
    // scratch.DTCM, the staged constant.DTCM and its blob, the cold FLASH blob.
    assert_eq!(checked, 4);
}
