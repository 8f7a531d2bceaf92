//! Checks a linked firmware ELF against its memory plan.
//!
//! The plan says, for every arena, the memory it lives in, its size and its alignment; the
//! linker fragment that `planner-build` writes turns that into one output section per arena.
//! This crate reads the image the linker actually produced and checks that it agrees:
//!
//! - every arena's output section and its `static` lie inside the memory region the plan
//!   names, start at an address aligned to the plan's alignment, and span the plan's size;
//! - zero-filled arenas are `NOLOAD` (`SHT_NOBITS`) and add no bytes to the file;
//! - constant blobs lie in a read-only region, are loaded from the file at their run address
//!   (read in place), and hold exactly the bytes of the blob `planner-build` wrote;
//! - no two arenas overlap, and every loadable byte of the image lies in some region.
//!
//! [`check`] does the work on bytes; [`memory_regions`] reads the `MEMORY` block of a linker
//! script so that the regions come from the same file the linker was given;
//! [`firmware::check_firmware`] runs the whole check of a built firmware (image, linker
//! scripts, the plan files of its `OUT_DIR`, each planned memory mapped onto its linker
//! region), as the `firmware-elf-check` binary does.

#![deny(missing_docs)]

pub mod firmware;
pub mod plan;

use std::fmt;

use object::elf;
use object::read::elf::{ElfFile32, ProgramHeader, SectionHeader};
use object::{LittleEndian, Object, ObjectSection, ObjectSymbol, SymbolKind};

/// A memory region of the target, as a `MEMORY` block declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The region's name in the linker script (`DTCM`, `QSPI`, ...).
    pub name: String,
    /// First address.
    pub origin: u64,
    /// Length in bytes.
    pub length: u64,
    /// Whether the core can write it at run time (false for flash or ROM).
    pub writable: bool,
}

impl Region {
    fn end(&self) -> u64 {
        self.origin.saturating_add(self.length)
    }

    fn contains(&self, start: u64, len: u64) -> bool {
        start >= self.origin && start.checked_add(len).is_some_and(|end| end <= self.end())
    }
}

/// What an arena's bytes must be in the image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contents {
    /// Zero-filled at run time (scratch, persistent, a staged constant's destination):
    /// `NOLOAD`, no file bytes.
    Zeroed,
    /// A constant blob read in place: loaded from the file, exactly these bytes.
    Blob(Vec<u8>),
}

/// One arena as the plan describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedArena {
    /// Output section the linker fragment gives the arena.
    pub section: String,
    /// Region (memory) the plan puts it in.
    pub region: String,
    /// Size in bytes, as planned.
    pub size: u64,
    /// Base alignment in bytes, as planned (a power of two).
    pub align: u64,
    /// What the bytes must be.
    pub contents: Contents,
    /// Symbols the fragment defines at the arena's first byte.
    pub start_symbols: Vec<String>,
    /// Symbols the fragment defines one past the arena's output section (its planned size,
    /// or that padded to its alignment).
    pub end_symbols: Vec<String>,
}

/// Where one arena landed, as read from the image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArenaReport {
    /// Output section.
    pub section: String,
    /// Region it lies in.
    pub region: String,
    /// Address of its first byte.
    pub address: u64,
    /// Size of the output section.
    pub size: u64,
    /// Name of the `static` (data symbol) at the section start.
    pub symbol: String,
    /// Size of that symbol.
    pub symbol_size: u64,
    /// Bytes the arena occupies in the ELF file (0 for `NOLOAD`).
    pub file_bytes: u64,
}

impl fmt::Display for ArenaReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<40} {:<6} 0x{:08x}..0x{:08x} {:>8} B, {:>8} file B",
            self.section,
            self.region,
            self.address,
            self.address + self.size,
            self.size,
            self.file_bytes
        )
    }
}

/// Everything the image got wrong; each line says what and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violations(pub Vec<String>);

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Violations {}

struct Loaded {
    vaddr: u64,
    paddr: u64,
    filesz: u64,
}

/// Checks the image `elf` (an ELF32 little-endian executable) against the plan's `arenas`,
/// with the target's memory `regions`. Returns one report per arena, in the given order, or
/// every violation found.
pub fn check(
    elf: &[u8],
    regions: &[Region],
    arenas: &[ExpectedArena],
) -> Result<Vec<ArenaReport>, Violations> {
    let file = ElfFile32::<LittleEndian>::parse(elf).map_err(|e| {
        Violations(vec![format!(
            "firmware image is not a 32-bit little-endian ELF file ({e}); pass the linked \
             thumbv8m.main-none-eabihf binary"
        )])
    })?;
    let endian = file.endian();
    let mut bad = Vec::new();

    let loads: Vec<Loaded> = file
        .elf_program_headers()
        .iter()
        .filter(|p| p.p_type(endian) == elf::PT_LOAD)
        .map(|p| Loaded {
            vaddr: p.p_vaddr(endian).into(),
            paddr: p.p_paddr(endian).into(),
            filesz: p.p_filesz(endian).into(),
        })
        .collect();

    // Every loadable byte must land in some region, or QEMU (or the board) drops it.
    for l in loads.iter().filter(|l| l.filesz > 0) {
        if !regions.iter().any(|r| r.contains(l.paddr, l.filesz)) {
            bad.push(format!(
                "a loadable segment at 0x{:08x} ({} bytes) lies in no memory region; fix the \
                 MEMORY block or the section that lands there",
                l.paddr, l.filesz
            ));
        }
    }

    let mut reports = Vec::with_capacity(arenas.len());
    for arena in arenas {
        match check_arena(&file, &loads, regions, arena) {
            Ok(report) => reports.push(report),
            Err(mut v) => bad.append(&mut v),
        }
    }

    runtime_bounds(&file, regions, &mut bad);

    // The linker refuses overlapping sections only within one region; check across all.
    for (i, a) in reports.iter().enumerate() {
        for b in &reports[i + 1..] {
            if a.address < b.address + b.size && b.address < a.address + a.size {
                bad.push(format!(
                    "arenas {} (0x{:08x}, {} bytes) and {} (0x{:08x}, {} bytes) overlap; two \
                     MEMORY regions of the linker script cover the same addresses",
                    a.section, a.address, a.size, b.section, b.address, b.size
                ));
            }
        }
    }

    if bad.is_empty() {
        Ok(reports)
    } else {
        Err(Violations(bad))
    }
}

fn check_arena(
    file: &ElfFile32<'_, LittleEndian>,
    loads: &[Loaded],
    regions: &[Region],
    arena: &ExpectedArena,
) -> Result<ArenaReport, Vec<String>> {
    let endian = file.endian();
    let name = &arena.section;
    let Some(section) = file.section_by_name(name) else {
        return Err(vec![format!(
            "arena section {name} is missing from the image; INCLUDE the planner's linker \
             fragment from memory.x and reference the model's statics (a section the linker \
             finds no input for is dropped)"
        )]);
    };
    let mut bad = Vec::new();
    let address = section.address();
    let size = section.size();
    let header = section.elf_section_header();
    let nobits = header.sh_type(endian) == elf::SHT_NOBITS;

    let region = regions.iter().find(|r| r.name == arena.region);
    check_placement(name, arena, region, address, size, &mut bad);
    let (symbol_name, symbol_size) = check_static(file, name, arena, address, size, &mut bad);

    for wanted in &arena.start_symbols {
        check_symbol(file, name, wanted, address, "start", &mut bad);
    }
    for wanted in &arena.end_symbols {
        check_symbol(file, name, wanted, address + size, "end", &mut bad);
    }

    // File bytes: the part of any PT_LOAD segment's file image inside this arena.
    let file_bytes: u64 = loads
        .iter()
        .map(|l| {
            let lo = l.vaddr.max(address);
            let hi = (l.vaddr + l.filesz).min(address + size);
            hi.saturating_sub(lo)
        })
        .sum();

    match &arena.contents {
        Contents::Zeroed => {
            if !nobits {
                bad.push(format!(
                    "arena {name} is zero-filled but its section is PROGBITS, {size} bytes of \
                     zeros in the file; give the static a `.bss.`-prefixed section and mark the \
                     output section (NOLOAD)"
                ));
            }
            if file_bytes != 0 {
                bad.push(format!(
                    "arena {name} is zero-filled but adds {file_bytes} bytes to the file; mark \
                     its output section (NOLOAD)"
                ));
            }
            if region.is_some_and(|r| !r.writable) {
                bad.push(format!(
                    "arena {name} is written at run time but lies in read-only memory {}; \
                     plan it in a writable memory",
                    arena.region
                ));
            }
        }
        Contents::Blob(blob) => {
            if region.is_some_and(|r| r.writable) {
                bad.push(format!(
                    "constant arena {name} lies in writable memory {}, not in flash; place \
                     constants in a read-only memory",
                    arena.region
                ));
            }
            if nobits {
                bad.push(format!(
                    "constant arena {name} is NOLOAD, so its weights are not in the image; \
                     give its output section no (NOLOAD)"
                ));
            } else if file_bytes < arena.size {
                bad.push(format!(
                    "constant arena {name} has {file_bytes} of its {} bytes in loadable \
                     segments; its weights would not be on the target",
                    arena.size
                ));
            }
            let moved = loads.iter().any(|l| {
                l.filesz > 0
                    && l.vaddr <= address
                    && address < l.vaddr + l.filesz
                    && l.paddr != l.vaddr
            });
            if moved {
                bad.push(format!(
                    "constant arena {name} is loaded at a different address than it is read \
                     from; weights are read in place, drop the `AT>` from its output section"
                ));
            }
            if blob.len() as u64 != arena.size {
                bad.push(format!(
                    "blob for arena {name} is {} bytes, the plan says {}; rebuild",
                    blob.len(),
                    arena.size
                ));
            } else if !nobits {
                match section.data() {
                    Ok(data) if data.get(..blob.len()) == Some(&blob[..]) => {}
                    Ok(data) => {
                        let at = data
                            .iter()
                            .zip(blob.iter())
                            .position(|(a, b)| a != b)
                            .unwrap_or(data.len().min(blob.len()));
                        bad.push(format!(
                            "constant arena {name} differs from its blob at byte {at}; the \
                             image holds stale weights, rebuild"
                        ));
                    }
                    Err(e) => bad.push(format!("cannot read section {name}: {e}")),
                }
            }
        }
    }

    if bad.is_empty() {
        Ok(ArenaReport {
            section: name.clone(),
            region: arena.region.clone(),
            address,
            size,
            symbol: symbol_name,
            symbol_size,
            file_bytes,
        })
    } else {
        Err(bad)
    }
}

/// The arena's placement: in its planned memory region, aligned as planned, as large as
/// planned (or padded to its alignment).
fn check_placement(
    name: &str,
    arena: &ExpectedArena,
    region: Option<&Region>,
    address: u64,
    size: u64,
    bad: &mut Vec<String>,
) {
    match region {
        None => bad.push(format!(
            "arena {name} is planned in memory {}, which the linker script does not declare; \
             add a MEMORY region of that name, or map the memory onto the region that holds \
             it (--region {}=RAM)",
            arena.region, arena.region
        )),
        Some(r) if !r.contains(address, size) => bad.push(format!(
            "arena {name} lies at 0x{address:08x}..0x{:08x}, outside memory {} \
             (0x{:08x}..0x{:08x}); the fragment must place it `> {}`",
            address + size,
            r.name,
            r.origin,
            r.end(),
            r.name
        )),
        Some(_) => {}
    }

    if arena.align == 0 || !arena.align.is_power_of_two() {
        bad.push(format!(
            "arena {name} has alignment {} in the plan, which is not a power of two; re-plan",
            arena.align
        ));
    } else if !address.is_multiple_of(arena.align) {
        bad.push(format!(
            "arena {name} starts at 0x{address:08x}, not aligned to the plan's {} bytes; the \
             fragment must align the section (ALIGN({}))",
            arena.align, arena.align
        ));
    }

    // The static may be padded up to its alignment; anything else means the section holds
    // more (or less) than the arena.
    let padded = arena.size.div_ceil(arena.align.max(1)) * arena.align.max(1);
    if size != arena.size && size != padded {
        bad.push(format!(
            "arena {name} is {size} bytes in the image, the plan says {} (or {padded} padded to \
             its alignment); rebuild so the plan and the statics agree",
            arena.size
        ));
    }
}

/// The arena's `static`: a data symbol at the first byte, covering the planned size; its
/// name and size (empty and 0 when there is none).
fn check_static(
    file: &ElfFile32<'_, LittleEndian>,
    name: &str,
    arena: &ExpectedArena,
    address: u64,
    size: u64,
    bad: &mut Vec<String>,
) -> (String, u64) {
    // The arena's `static`: a data symbol at the first byte, covering the planned size.
    let symbol = file
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Data && s.address() == address && s.size() > 0)
        .max_by_key(|s| s.size());
    let (symbol_name, symbol_size) = match symbol {
        Some(s) => (s.name().unwrap_or("?").to_string(), s.size()),
        None => {
            bad.push(format!(
                "arena {name} has no data symbol at its start 0x{address:08x}; the model's \
                 arena static must be the section's only input"
            ));
            (String::new(), 0)
        }
    };
    if symbol.is_some() && (symbol_size < arena.size || symbol_size > size) {
        bad.push(format!(
            "arena {name}'s static {symbol_name} is {symbol_size} bytes, the plan needs {} in a \
             {size}-byte section; rebuild so the plan and the statics agree",
            arena.size
        ));
    }
    (symbol_name, symbol_size)
}

/// cortex-m-rt's start-up code zeroes `__sbss..__ebss` and copies `.data` to
/// `__sdata..__edata`, looping until the start meets the end: both bounds must lie in one
/// region, in order. A fragment whose sections are inserted right after `.bss` in another
/// region moves `__ebss` there (the location counter follows the last section), and the
/// zeroing loop then runs off the end of RAM at reset.
fn runtime_bounds(file: &ElfFile32<'_, LittleEndian>, regions: &[Region], bad: &mut Vec<String>) {
    let addr = |name: &str| {
        file.symbols()
            .find(|s| s.name() == Ok(name))
            .map(|s| s.address())
    };
    for (start, end, what) in [
        ("__sbss", "__ebss", ".bss"),
        ("__sdata", "__edata", ".data"),
    ] {
        let (Some(s), Some(e)) = (addr(start), addr(end)) else {
            continue;
        };
        let region = regions.iter().find(|r| r.contains(s, 0));
        let same = region.is_some_and(|r| e >= s && e <= r.end());
        if !same {
            bad.push(format!(
                "cortex-m-rt's {what} runs from {start} = 0x{s:08x} to {end} = 0x{e:08x}, not \
                 within one memory region, so its start-up code would write past RAM; insert \
                 the planner's sections BEFORE .bss (or without INSERT), not after it"
            ));
        }
    }
}

fn check_symbol(
    file: &ElfFile32<'_, LittleEndian>,
    arena: &str,
    wanted: &str,
    expected: u64,
    which: &str,
    bad: &mut Vec<String>,
) {
    match file.symbols().find(|s| s.name() == Ok(wanted)) {
        None => bad.push(format!(
            "symbol {wanted} ({which} of arena {arena}) is missing from the image; the linker \
             fragment defines it, INCLUDE the fragment"
        )),
        Some(s) if s.address() != expected => bad.push(format!(
            "symbol {wanted} is at 0x{:08x}, the {which} of arena {arena} is 0x{expected:08x}; \
             the fragment and the plan disagree, rebuild",
            s.address()
        )),
        Some(_) => {}
    }
}

/// Reads the `MEMORY { ... }` blocks of a linker script: `NAME (attrs) : ORIGIN = x, LENGTH = y`
/// with hexadecimal or decimal numbers and `K`/`M` suffixes. A region is writable unless its
/// attributes are given and lack `w` (as in `(rx)`); read-only memories must say so.
pub fn memory_regions(script: &str) -> Result<Vec<Region>, String> {
    let text = strip_comments(script);
    let mut regions = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = find_word(rest, "MEMORY") {
        let after = &rest[at + "MEMORY".len()..];
        let open = after
            .find('{')
            .ok_or_else(|| "MEMORY without `{` in linker script".to_string())?;
        let close = after[open..]
            .find('}')
            .ok_or_else(|| "MEMORY block without `}` in linker script".to_string())?;
        for line in after[open + 1..open + close].split(['\n', ';']) {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            regions.push(parse_region(line)?);
        }
        rest = &after[open + close..];
    }
    Ok(regions)
}

fn find_word(haystack: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = haystack[from..].find(word) {
        let at = from + i;
        let before_ok = at == 0 || !is_ident(haystack.as_bytes()[at - 1]);
        let end = at + word.len();
        let after_ok = end >= haystack.len() || !is_ident(haystack.as_bytes()[end]);
        if before_ok && after_ok {
            return Some(at);
        }
        from = end;
    }
    None
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn strip_comments(script: &str) -> String {
    let mut out = String::with_capacity(script.len());
    let mut rest = script;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        match rest[start + 2..].find("*/") {
            Some(end) => rest = &rest[start + 2 + end + 2..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

fn parse_region(line: &str) -> Result<Region, String> {
    let (head, tail) = line.split_once(':').ok_or_else(|| {
        format!("memory region `{line}` has no `:`; write NAME : ORIGIN = .., LENGTH = ..")
    })?;
    let head = head.trim();
    let (name, attrs) = match head.split_once('(') {
        Some((n, a)) => (
            n.trim(),
            Some(a.trim_end_matches(')').trim().to_ascii_lowercase()),
        ),
        None => (head, None),
    };
    let mut origin = None;
    let mut length = None;
    for part in tail.split(',') {
        let Some((key, value)) = part.split_once('=') else {
            return Err(format!(
                "memory region {name}: `{}` is not KEY = VALUE",
                part.trim()
            ));
        };
        let value = parse_number(value.trim()).ok_or_else(|| {
            format!(
                "memory region {name}: cannot read number `{}`",
                value.trim()
            )
        })?;
        match key.trim() {
            "ORIGIN" | "org" | "o" => origin = Some(value),
            "LENGTH" | "len" | "l" => length = Some(value),
            other => return Err(format!("memory region {name}: unknown key `{other}`")),
        }
    }
    // `(rwx)`, `(rx)`, `(rx!w)`: the letters after `!` are the ones the region lacks.
    let writable = attrs
        .as_deref()
        .is_none_or(|a| a.split('!').next().is_some_and(|set| set.contains('w')));
    Ok(Region {
        name: name.to_string(),
        origin: origin.ok_or_else(|| format!("memory region {name} has no ORIGIN"))?,
        length: length.ok_or_else(|| format!("memory region {name} has no LENGTH"))?,
        writable,
    })
}

fn parse_number(text: &str) -> Option<u64> {
    let (digits, scale) = match text.as_bytes().last()? {
        b'K' | b'k' => (&text[..text.len() - 1], 1024),
        b'M' | b'm' => (&text[..text.len() - 1], 1024 * 1024),
        _ => (text, 1),
    };
    let value = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    value.checked_mul(scale)
}

#[cfg(test)]
mod tests;
