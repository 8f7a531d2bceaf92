//! The checker against small ELF images written here byte by byte, one fault each.

use super::*;

/// A section of the synthetic image.
struct Sec {
    name: &'static str,
    addr: u32,
    size: u32,
    nobits: bool,
    data: Vec<u8>,
    /// Load address, when it differs from `addr` (an `AT>` section).
    load_at: Option<u32>,
}

fn zeroed(name: &'static str, addr: u32, size: u32) -> Sec {
    Sec {
        name,
        addr,
        size,
        nobits: true,
        data: Vec::new(),
        load_at: None,
    }
}

fn progbits(name: &'static str, addr: u32, data: Vec<u8>) -> Sec {
    Sec {
        name,
        addr,
        size: data.len() as u32,
        nobits: false,
        data,
        load_at: None,
    }
}

/// Writes an ELF32 little-endian ARM executable: one PT_LOAD per section, a data symbol of
/// the section's size at each section start, plus the extra absolute `symbols`.
fn image(sections: &[Sec], symbols: &[(&str, u32)]) -> Vec<u8> {
    fn u16le(v: &mut Vec<u8>, x: u16) {
        v.extend_from_slice(&x.to_le_bytes());
    }
    fn u32le(v: &mut Vec<u8>, x: u32) {
        v.extend_from_slice(&x.to_le_bytes());
    }
    // String tables.
    let mut shstr = vec![0u8];
    let mut sec_names = Vec::new();
    for s in sections
        .iter()
        .map(|s| s.name)
        .chain([".symtab", ".strtab", ".shstrtab"])
    {
        sec_names.push(shstr.len() as u32);
        shstr.extend_from_slice(s.as_bytes());
        shstr.push(0);
    }
    let mut strtab = vec![0u8];
    let mut syms: Vec<(u32, u32, u32, u8, u16)> = vec![(0, 0, 0, 0, 0)];
    for (i, s) in sections.iter().enumerate() {
        let off = strtab.len() as u32;
        strtab.extend_from_slice(format!("ARENA_{i}").as_bytes());
        strtab.push(0);
        // STB_GLOBAL << 4 | STT_OBJECT
        syms.push((off, s.addr, s.size, 0x11, (i + 1) as u16));
    }
    for (name, value) in symbols {
        let off = strtab.len() as u32;
        strtab.extend_from_slice(name.as_bytes());
        strtab.push(0);
        // STB_GLOBAL << 4 | STT_NOTYPE, SHN_ABS
        syms.push((off, *value, 0, 0x10, 0xfff1));
    }

    let n_ph = sections.len() as u32;
    let ph_off = 52u32;
    let mut data_off = ph_off + 32 * n_ph;
    let mut offsets = Vec::new();
    for s in sections {
        offsets.push(data_off);
        if !s.nobits {
            data_off += s.data.len() as u32;
        }
    }
    let symtab_off = data_off;
    let symtab_len = 16 * syms.len() as u32;
    let strtab_off = symtab_off + symtab_len;
    let shstr_off = strtab_off + strtab.len() as u32;
    let sh_off = (shstr_off + shstr.len() as u32).next_multiple_of(4);
    let n_sh = sections.len() as u32 + 4;

    let mut v = Vec::new();
    v.extend_from_slice(&[0x7f, b'E', b'L', b'F', 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    u16le(&mut v, 2); // ET_EXEC
    u16le(&mut v, 40); // EM_ARM
    u32le(&mut v, 1);
    u32le(&mut v, 0x101); // e_entry
    u32le(&mut v, ph_off);
    u32le(&mut v, sh_off);
    u32le(&mut v, 0x0500_0400);
    u16le(&mut v, 52);
    u16le(&mut v, 32);
    u16le(&mut v, n_ph as u16);
    u16le(&mut v, 40);
    u16le(&mut v, n_sh as u16);
    u16le(&mut v, (n_sh - 1) as u16);
    for (s, off) in sections.iter().zip(&offsets) {
        u32le(&mut v, 1); // PT_LOAD
        u32le(&mut v, *off);
        u32le(&mut v, s.addr);
        u32le(&mut v, s.load_at.unwrap_or(s.addr));
        u32le(&mut v, if s.nobits { 0 } else { s.size });
        u32le(&mut v, s.size);
        u32le(&mut v, 6);
        u32le(&mut v, 4);
    }
    for s in sections.iter().filter(|s| !s.nobits) {
        v.extend_from_slice(&s.data);
    }
    for (name, value, size, info, shndx) in &syms {
        u32le(&mut v, *name);
        u32le(&mut v, *value);
        u32le(&mut v, *size);
        v.push(*info);
        v.push(0);
        u16le(&mut v, *shndx);
    }
    v.extend_from_slice(&strtab);
    v.extend_from_slice(&shstr);
    v.resize(sh_off as usize, 0);
    v.extend_from_slice(&[0; 40]);
    let shdr = |v: &mut Vec<u8>, name, ty, flags, addr, off, size, link, info, align, ent| {
        for x in [name, ty, flags, addr, off, size, link, info, align, ent] {
            u32le(v, x);
        }
    };
    for ((s, off), name) in sections.iter().zip(&offsets).zip(&sec_names) {
        let ty = if s.nobits { 8 } else { 1 };
        shdr(&mut v, *name, ty, 3, s.addr, *off, s.size, 0, 0, 4, 0);
    }
    let n = sections.len();
    let strtab_index = n as u32 + 2;
    shdr(
        &mut v,
        sec_names[n],
        2,
        0,
        0,
        symtab_off,
        symtab_len,
        strtab_index,
        1,
        4,
        16,
    );
    shdr(
        &mut v,
        sec_names[n + 1],
        3,
        0,
        0,
        strtab_off,
        strtab.len() as u32,
        0,
        0,
        1,
        0,
    );
    shdr(
        &mut v,
        sec_names[n + 2],
        3,
        0,
        0,
        shstr_off,
        shstr.len() as u32,
        0,
        0,
        1,
        0,
    );
    v
}

fn regions() -> Vec<Region> {
    memory_regions(
        "MEMORY {\n  DTCM : ORIGIN = 0x20000000, LENGTH = 512K\n  \
         SRAM : ORIGIN = 0x01000000, LENGTH = 2M\n  QSPI (rx) : ORIGIN = 0x28000000, LENGTH = 8M\n}",
    )
    .unwrap()
}

fn scratch(size: u64) -> ExpectedArena {
    ExpectedArena {
        section: ".planner.m.scratch.dtcm".into(),
        region: "DTCM".into(),
        size,
        align: 16,
        contents: Contents::Zeroed,
        start_symbols: vec!["__m_scratch_dtcm_start".into()],
        end_symbols: vec!["__m_scratch_dtcm_end".into()],
    }
}

fn weights(blob: Vec<u8>) -> ExpectedArena {
    ExpectedArena {
        section: ".planner.m.constant.qspi".into(),
        region: "QSPI".into(),
        size: blob.len() as u64,
        align: 16,
        contents: Contents::Blob(blob),
        start_symbols: vec![],
        end_symbols: vec![],
    }
}

fn blob() -> Vec<u8> {
    (0..48u8).collect()
}

fn good_sections() -> Vec<Sec> {
    vec![
        zeroed(".planner.m.scratch.dtcm", 0x2000_0000, 100),
        progbits(".planner.m.constant.qspi", 0x2800_0000, blob()),
    ]
}

fn good_symbols() -> Vec<(&'static str, u32)> {
    vec![
        ("__m_scratch_dtcm_start", 0x2000_0000),
        ("__m_scratch_dtcm_end", 0x2000_0064),
    ]
}

fn run(
    sections: &[Sec],
    symbols: &[(&str, u32)],
    arenas: &[ExpectedArena],
) -> Result<Vec<ArenaReport>, Violations> {
    check(&image(sections, symbols), &regions(), arenas)
}

fn fails_with(result: Result<Vec<ArenaReport>, Violations>, needle: &str) {
    match result {
        Ok(r) => panic!("expected a violation containing {needle:?}, got reports {r:?}"),
        Err(v) => assert!(
            v.0.iter().any(|line| line.contains(needle)),
            "no violation contains {needle:?}: {v}"
        ),
    }
}

#[test]
fn a_correct_image_passes_and_reports_where_arenas_are() {
    let reports = run(
        &good_sections(),
        &good_symbols(),
        &[scratch(100), weights(blob())],
    )
    .unwrap();
    assert_eq!(reports[0].address, 0x2000_0000);
    assert_eq!(reports[0].region, "DTCM");
    assert_eq!(reports[0].file_bytes, 0);
    assert_eq!(reports[0].symbol, "ARENA_0");
    assert_eq!(reports[1].file_bytes, 48);
}

#[test]
fn padding_to_the_alignment_is_accepted() {
    let mut s = good_sections();
    s[0].size = 112;
    // The end symbol marks the end of the padded section.
    let syms = [
        ("__m_scratch_dtcm_start", 0x2000_0000),
        ("__m_scratch_dtcm_end", 0x2000_0070),
    ];
    assert!(run(&s, &syms, &[scratch(100)]).is_ok());
    fails_with(
        run(&s, &good_symbols(), &[scratch(100)]),
        "__m_scratch_dtcm_end",
    );
    // Padding past the alignment is not.
    s[0].size = 128;
    let syms = [
        ("__m_scratch_dtcm_start", 0x2000_0000),
        ("__m_scratch_dtcm_end", 0x2000_0080),
    ];
    fails_with(run(&s, &syms, &[scratch(100)]), "is 128 bytes in the image");
}

/// The scratch arena and its symbols moved to another address, its 100 bytes kept: in
/// another region, running off the end of its own, and off its alignment.
#[test]
fn a_moved_arena_fails_where_it_does_not_fit() {
    for (addr, needle) in [
        (0x0100_0000, "outside memory DTCM"),
        (0x2008_0000 - 64, "outside memory DTCM"),
        (0x2000_0008, "not aligned to the plan's 16 bytes"),
    ] {
        let mut s = good_sections();
        s[0].addr = addr;
        let syms = [
            ("__m_scratch_dtcm_start", addr),
            ("__m_scratch_dtcm_end", addr + 100),
        ];
        fails_with(run(&s, &syms, &[scratch(100)]), needle);
    }
}

#[test]
fn a_size_other_than_planned_fails() {
    fails_with(
        run(&good_sections(), &good_symbols(), &[scratch(80)]),
        "the plan says 80",
    );
}

#[test]
fn a_missing_section_or_symbol_fails() {
    fails_with(
        run(&good_sections()[1..], &[], &[scratch(100)]),
        "is missing from the image",
    );
    fails_with(
        run(&good_sections(), &good_symbols()[..1], &[scratch(100)]),
        "symbol __m_scratch_dtcm_end",
    );
    let moved = [
        ("__m_scratch_dtcm_start", 0x2000_0000),
        ("__m_scratch_dtcm_end", 0x2000_0070),
    ];
    fails_with(
        run(&good_sections(), &moved, &[scratch(100)]),
        "fragment and the plan disagree",
    );
}

#[test]
fn a_zero_filled_arena_with_file_bytes_fails() {
    let mut s = good_sections();
    s[0] = progbits(".planner.m.scratch.dtcm", 0x2000_0000, vec![0; 100]);
    let r = run(&s, &good_symbols(), &[scratch(100)]);
    fails_with(r.clone(), "is PROGBITS");
    fails_with(r, "adds 100 bytes to the file");
}

#[test]
fn constants_must_be_in_read_only_memory_and_read_in_place() {
    let mut s = good_sections();
    s[1].addr = 0x0100_0000;
    let mut w = weights(blob());
    w.region = "SRAM".into();
    fails_with(run(&s, &good_symbols(), &[w]), "writable memory SRAM");

    let mut s = good_sections();
    s[1].load_at = Some(0x2800_1000);
    fails_with(
        run(&s, &good_symbols(), &[weights(blob())]),
        "read in place",
    );
}

#[test]
fn stale_or_missing_weights_fail() {
    let mut stale = blob();
    stale[17] ^= 1;
    fails_with(
        run(&good_sections(), &good_symbols(), &[weights(stale)]),
        "differs from its blob at byte 17",
    );
    let mut s = good_sections();
    s[1] = zeroed(".planner.m.constant.qspi", 0x2800_0000, 48);
    fails_with(run(&s, &good_symbols(), &[weights(blob())]), "is NOLOAD");
}

#[test]
fn overlapping_arenas_in_different_regions_fail() {
    let mut s = good_sections();
    s.push(zeroed(".planner.m.scratch.sram", 0x2000_0020, 32));
    let mut other = scratch(32);
    other.section = ".planner.m.scratch.sram".into();
    other.start_symbols.clear();
    other.end_symbols.clear();
    fails_with(run(&s, &good_symbols(), &[scratch(100), other]), "overlap");
}

#[test]
fn a_segment_outside_every_region_fails() {
    let mut s = good_sections();
    s.push(progbits(".stray", 0x4000_0000, vec![1, 2, 3, 4]));
    fails_with(
        run(&s, &good_symbols(), &[scratch(100)]),
        "lies in no memory region",
    );
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    let r = check(b"not an elf", &regions(), &[scratch(1)]);
    fails_with(r, "not a 32-bit little-endian ELF");
}

#[test]
fn memory_blocks_are_read_with_suffixes_attributes_and_comments() {
    let r = memory_regions(
        "/* map */ MEMORY\n{\n FLASH (rx!w) : ORIGIN = 0x00000000, LENGTH = 512K /* ITCM */\n \
         RAM (rwx) : ORIGIN = 0x21000000, LENGTH = 4M\n DDR : org = 1610612736, len = 0x100\n}\n\
         SECTIONS { }",
    )
    .unwrap();
    assert_eq!(r.len(), 3);
    assert_eq!(
        (r[0].name.as_str(), r[0].origin, r[0].length, r[0].writable),
        ("FLASH", 0, 512 * 1024, false)
    );
    assert_eq!(
        (r[1].origin, r[1].length, r[1].writable),
        (0x2100_0000, 4 << 20, true)
    );
    assert_eq!(
        (r[2].origin, r[2].length, r[2].writable),
        (0x6000_0000, 0x100, true)
    );
    assert!(
        memory_regions("MEMORY { X : ORIGIN = zz, LENGTH = 1 }")
            .unwrap_err()
            .contains("zz")
    );
}

/// A fresh directory under the system temp dir, unique to this test.
fn temp_dir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("firmware-elf-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const PLAN: &str = r#"{
  "format_version": 6,
  "generator": "planner test",
  "model": "m",
  "plan_hash": "fnv1a64:0000000000000000",
  "arenas": [
    { "name": "scratch.DTCM", "role": "scratch", "memory": "DTCM", "source_memory": "DTCM",
      "size": 100, "budget": null, "alignment": 16,
      "section": ".bss.planner.m.scratch.dtcm", "blob": null },
    { "name": "constant.DTCM", "role": "constant", "memory": "DTCM", "source_memory": "QSPI",
      "size": 48, "budget": null, "alignment": 16,
      "section": ".bss.planner.m.constant.dtcm",
      "blob": { "file": "m.constant.dtcm.bin", "section": ".rodata.planner.m.constant.qspi",
                "size": 48, "hash": "fnv1a64:0" } }
  ],
  "tensors": [], "ops": [], "inputs": [], "outputs": [], "memories": []
}"#;

#[test]
fn a_plan_file_gives_each_writable_arena_and_each_blob() {
    let dir = temp_dir("plan");
    std::fs::write(dir.join("m.plan.json"), PLAN).unwrap();
    std::fs::write(dir.join("m.constant.dtcm.bin"), blob()).unwrap();
    let found = plan::find(&dir).unwrap();
    assert_eq!(found, [dir.join("m.plan.json")]);
    let m = plan::load(&found[0]).unwrap();
    assert_eq!(m.model, "m");
    let names: Vec<(&str, &str)> = m
        .arenas
        .iter()
        .map(|a| (a.section.as_str(), a.region.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            (".planner.m.scratch.dtcm", "DTCM"),
            (".planner.m.constant.dtcm", "DTCM"),
            (".planner.m.constant.qspi", "QSPI"),
        ]
    );
    assert_eq!(
        m.arenas[0].start_symbols,
        ["__planner_m_scratch_dtcm_start"]
    );
    assert_eq!(m.arenas[2].contents, Contents::Blob(blob()));

    // The image with the staged copy's section added passes against this plan.
    let mut sections = good_sections();
    sections.push(zeroed(".planner.m.constant.dtcm", 0x2000_0070, 48));
    let syms = [
        ("__planner_m_scratch_dtcm_start", 0x2000_0000),
        ("__planner_m_scratch_dtcm_end", 0x2000_0064),
        ("__planner_m_constant_dtcm_start", 0x2000_0070),
        ("__planner_m_constant_dtcm_end", 0x2000_00a0),
        ("__planner_m_constant_qspi_start", 0x2800_0000),
        ("__planner_m_constant_qspi_end", 0x2800_0030),
    ];
    sections[0].name = ".planner.m.scratch.dtcm";
    sections[1].name = ".planner.m.constant.qspi";
    let reports = run(&sections, &syms, &m.arenas).unwrap();
    assert_eq!(reports.len(), 3);
}

#[test]
fn plan_files_of_another_version_or_with_stale_blobs_are_refused() {
    let dir = temp_dir("version");
    std::fs::write(
        dir.join("m.plan.json"),
        PLAN.replace("\"format_version\": 6", "\"format_version\": 9"),
    )
    .unwrap();
    let e = plan::load(&dir.join("m.plan.json")).unwrap_err();
    assert!(e.contains("format version 9"), "{e}");

    let dir = temp_dir("stale");
    std::fs::write(dir.join("m.plan.json"), PLAN).unwrap();
    std::fs::write(dir.join("m.constant.dtcm.bin"), [0u8; 3]).unwrap();
    let e = plan::load(&dir.join("m.plan.json")).unwrap_err();
    assert!(e.contains("is 3 bytes, its plan file says 48"), "{e}");
    std::fs::remove_file(dir.join("m.constant.dtcm.bin")).unwrap();
    let e = plan::load(&dir.join("m.plan.json")).unwrap_err();
    assert!(
        e.contains("cannot read the blob of arena constant.DTCM"),
        "{e}"
    );
}

#[test]
fn cortex_m_rt_bss_bounds_must_stay_in_one_region() {
    let mut s = good_sections();
    s.push(zeroed(".bss", 0x0100_0000, 16));
    let mut syms = good_symbols();
    syms.push(("__sbss", 0x0100_0000));
    syms.push(("__ebss", 0x0100_0010));
    assert!(run(&s, &syms, &[scratch(100)]).is_ok());
    // What `INSERT AFTER .bss` of a DTCM section does to cortex-m-rt's `__ebss`.
    syms.pop();
    syms.push(("__ebss", 0x2000_0070));
    fails_with(
        run(&s, &syms, &[scratch(100)]),
        "insert the planner's sections BEFORE .bss",
    );
}

/// The group plan of the UI tests (`tests/ui/plans/pair.toml`, planned by planner-macros'
/// golden test): `a` and `b` in turn, `b` and `c` concurrent.
fn pair_plan() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../ui/plans/pair.plan.json");
    std::fs::read_to_string(path).unwrap()
}

/// The pair group's plan file and blob, written to `dir`, and the plan loaded from there.
fn pair_in(dir: &std::path::Path) -> plan::ModelArenas {
    std::fs::write(dir.join("pair.plan.json"), pair_plan()).unwrap();
    let blob = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ui/plans/pair.constant.flash.bin"
    );
    std::fs::copy(blob, dir.join("pair.constant.flash.bin")).unwrap();
    plan::load(&dir.join("pair.plan.json")).unwrap()
}

#[test]
fn a_group_plan_gives_the_group_arenas_at_the_group_need() {
    let dir = temp_dir("group");
    let m = pair_in(&dir);
    assert_eq!(m.model, "pair");
    let scratch = m
        .arenas
        .iter()
        .find(|a| a.section == ".planner.pair.scratch.sram")
        .unwrap();
    // a needs 32, b 64, c 32 beside b: the shared arena is 96, not the sum 128.
    assert_eq!(scratch.size, 96);

    // The same plan with the scratch arena grown to the sum of its users is refused.
    let text = pair_plan();
    let grown = text.replacen("\"size\": 96,", "\"size\": 128,", 1);
    assert_ne!(grown, text);
    std::fs::write(dir.join("pair.plan.json"), grown).unwrap();
    let e = plan::load(&dir.join("pair.plan.json")).unwrap_err();
    assert!(
        e.contains(
            "arena scratch.SRAM of group pair is 128 bytes, but its users (a, b, c) need 96"
        ),
        "{e}"
    );
}

/// The pair group's image with its SRAM arenas in region `RAM` (as the `memory.x` that
/// `write_memory_x` writes maps the memory onto cortex-m-rt's region), written to `dir` with
/// the plan, its blob and a `memory.x` declaring `RAM` and `FLASH` only.
fn pair_firmware(dir: &std::path::Path) -> firmware::CheckOptions {
    let m = pair_in(dir);
    let mut sections = Vec::new();
    let mut symbols: Vec<(String, u32)> = Vec::new();
    let (mut ram, mut flash) = (0x2000_0000u32, 0x0000_0000u32);
    for a in &m.arenas {
        let name: &'static str = Box::leak(a.section.clone().into_boxed_str());
        let at = match &a.contents {
            Contents::Zeroed => {
                sections.push(zeroed(name, ram, a.size as u32));
                let at = ram;
                ram += (a.size as u32).div_ceil(16) * 16;
                at
            }
            Contents::Blob(bytes) => {
                sections.push(progbits(name, flash, bytes.clone()));
                let at = flash;
                flash += (a.size as u32).div_ceil(16) * 16;
                at
            }
        };
        for s in &a.start_symbols {
            symbols.push((s.clone(), at));
        }
        for s in &a.end_symbols {
            symbols.push((s.clone(), at + a.size as u32));
        }
    }
    let symbols: Vec<(&str, u32)> = symbols.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let elf = dir.join("app.elf");
    std::fs::write(&elf, image(&sections, &symbols)).unwrap();
    let script = dir.join("memory.x");
    std::fs::write(
        &script,
        "MEMORY\n{\n  FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 64K\n  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 64K\n}\n",
    )
    .unwrap();
    let mut options = firmware::CheckOptions::new(elf);
    options.scripts.push(script);
    options.plan_dir = Some(dir.to_path_buf());
    options
}

#[test]
fn a_memory_is_checked_in_the_region_it_is_mapped_onto() {
    // Without a mapping, SRAM is a region nobody declared (the README's layout failed so).
    let dir = temp_dir("mapping");
    let options = pair_firmware(&dir);
    let e = firmware::check_firmware(&options).unwrap_err();
    assert!(
        e.contains("arena .planner.pair.scratch.sram is planned in memory SRAM, which the linker script does not declare"),
        "{e}"
    );
    assert!(e.contains("--region SRAM=RAM"), "{e}");

    // Mapped by hand (`--region SRAM=RAM`): it passes and counts the group's models.
    let mut mapped = options.clone();
    mapped.regions.insert("SRAM".into(), "RAM".into());
    let summary = firmware::check_firmware(&mapped).unwrap();
    assert_eq!(summary.reports.len(), 3);
    assert_eq!(summary.models(), 3);
    let text = summary.to_string();
    assert!(
        text.contains("3 arenas of 3 models (a, b, c) from 1 plan file in their planned regions"),
        "{text}"
    );
    assert!(text.contains("memory SRAM is region RAM"), "{text}");
    assert!(summary.reports.iter().all(|r| r.region != "SRAM"));

    // A region the scripts do not declare is refused by name.
    let mut wrong = options.clone();
    wrong.regions.insert("SRAM".into(), "RAM2".into());
    let e = firmware::check_firmware(&wrong).unwrap_err();
    assert!(
        e.contains(
            "--region SRAM=RAM2 names region RAM2, but the linker scripts declare FLASH, RAM"
        ),
        "{e}"
    );

    // Mapped by the linker fragment that planner-build wrote (`} > RAM`): no flag needed.
    let fragment: String = ["scratch", "persistent"]
        .iter()
        .map(|r| {
            format!(
                "  .planner.pair.{r}.sram (NOLOAD) : ALIGN(16)\n  {{\n    KEEP(*(.bss.planner.pair.{r}.sram));\n  }} > RAM\n"
            )
        })
        .collect();
    std::fs::write(
        dir.join("pair.x"),
        format!("SECTIONS\n{{\n{fragment}}}\nINSERT BEFORE .bss;\n"),
    )
    .unwrap();
    let summary = firmware::check_firmware(&options).unwrap();
    assert_eq!(summary.mapped.get("SRAM").map(String::as_str), Some("RAM"));
}

#[test]
fn fragments_say_which_region_each_section_is_placed_in() {
    let x = "SECTIONS\n{\n  .planner.m.scratch.dtcm (NOLOAD) : ALIGN(16)\n  {\n    __s = .;\n  } > RAM\n  .planner.m.constant.qspi : ALIGN(16)\n  {\n  } > FLASH\n  .host : ALIGN(4)\n  {\n  }\n}\n";
    let placed = firmware::section_regions(x);
    assert_eq!(placed.len(), 2, "{placed:?}");
    assert_eq!(placed[".planner.m.scratch.dtcm"], "RAM");
    assert_eq!(placed[".planner.m.constant.qspi"], "FLASH");
    assert_eq!(
        firmware::parse_mapping(" DTCM = RAM ").unwrap(),
        ("DTCM".to_string(), "RAM".to_string())
    );
    assert!(
        firmware::parse_mapping("DTCM")
            .unwrap_err()
            .contains("MEMORY=REGION")
    );
    assert!(
        firmware::parse_mapping("=RAM")
            .unwrap_err()
            .contains("empty name")
    );
}

#[test]
fn one_model_is_counted_as_one() {
    let dir = temp_dir("one");
    std::fs::write(dir.join("m.plan.json"), PLAN).unwrap();
    std::fs::write(dir.join("m.constant.dtcm.bin"), blob()).unwrap();
    let m = plan::load(&dir.join("m.plan.json")).unwrap();
    assert_eq!(m.models, ["m"]);
}

#[test]
fn the_plan_dir_is_out_dir_or_its_planner_folder() {
    // planner-build writes OUT_DIR/planner/*.plan.json; --plan-dir OUT_DIR (what --help and
    // the error say) needed OUT_DIR/planner before.
    let out_dir = temp_dir("out-dir");
    std::fs::create_dir_all(out_dir.join("planner")).unwrap();
    let options = pair_firmware(&out_dir.join("planner"));
    for dir in [out_dir.clone(), out_dir.join("planner")] {
        let mut o = options.clone();
        o.plan_dir = Some(dir.clone());
        o.regions.insert("SRAM".into(), "RAM".into());
        let summary = firmware::check_firmware(&o)
            .unwrap_or_else(|e| panic!("--plan-dir {}: {e}", dir.display()));
        assert_eq!(summary.models(), 3, "--plan-dir {}", dir.display());
    }
    // Neither place holds a plan: the error names both and what OUT_DIR is.
    let empty = temp_dir("no-plans");
    let mut o = options.clone();
    o.plan_dir = Some(empty.clone());
    let e = firmware::check_firmware(&o).unwrap_err();
    assert!(
        e.contains(&format!(
            "no plan file (*.plan.json) in {}",
            empty.display()
        )),
        "{e}"
    );
    assert!(
        e.contains(&empty.join("planner").display().to_string()),
        "{e}"
    );
    assert!(e.contains("OUT_DIR"), "{e}");
}
