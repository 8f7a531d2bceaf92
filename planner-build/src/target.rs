//! What links: the most bytes of arena statics one plan may ask of its target.
//!
//! An arena becomes a `static` (and a constant arena a blob `static` too); rustc accepts any
//! static up to `isize::MAX`, but the linker must then reach it from the code. On x86_64
//! the default (small) code model addresses statics with 32-bit PC-relative offsets: code and
//! every static together must fit in 2 GiB, so two 1.5 GiB arenas, or one 2 GiB arena next
//! to the standard library's own statics, fail to link (`relocation R_X86_64_PC32 out of
//! range`) after rustc has accepted them. A 32-bit target has 4 GiB of address space for
//! everything. So a plan is refused here, before any file is written, when its statics
//! together pass what the target links, less a reserve for the program's own code and
//! statics.

use planner::Error;
use planner::planfile::ArenaEntry;

/// Bytes of the address range kept for the program's own code and statics.
pub const PROGRAM_RESERVE: u64 = 256 << 20;

/// What the statics of one plan may take together on one target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkLimit {
    /// The target triple (or `host (ARCH)` when none was given).
    pub target: String,
    /// The most bytes of arena and blob statics.
    pub max_total: u64,
    /// Why: the range the linker must reach everything in.
    pub why: &'static str,
}

/// The limit for target `triple` (`x86_64-unknown-linux-gnu`, `thumbv8m.main-none-eabihf`).
pub fn link_limit(triple: &str) -> LinkLimit {
    let arch = triple.split('-').next().unwrap_or("");
    let (range, why): (u64, &'static str) = if arch == "x86_64" {
        (
            1 << 31,
            "x86_64's default (small) code model reaches statics with 32-bit PC-relative addresses: code and all statics within 2 GiB",
        )
    } else if arch == "aarch64" || arch == "arm64ec" {
        (
            1 << 32,
            "aarch64's default (small) code model reaches statics with ADRP: code and all statics within 4 GiB",
        )
    } else if is_32_bit(arch) {
        (
            1 << 32,
            "a 32-bit target has 4 GiB of address space for code and all statics",
        )
    } else {
        // riscv64 (medany: +-2 GiB), powerpc64, and what this list does not know: the
        // 2 GiB reach of the most common 64-bit code models.
        (
            1 << 31,
            "its default code model is taken to reach statics within 2 GiB of the code, as x86_64's and riscv64's do",
        )
    };
    LinkLimit {
        target: triple.to_string(),
        max_total: range - PROGRAM_RESERVE,
        why,
    }
}

fn is_32_bit(arch: &str) -> bool {
    arch.starts_with("thumb")
        || arch.starts_with("armv")
        || arch == "arm"
        || arch.starts_with("armeb")
        || arch.starts_with("riscv32")
        || arch.starts_with("i586")
        || arch.starts_with("i686")
        || arch.starts_with("i386")
        || arch == "x86"
        || arch.starts_with("wasm32")
        || arch == "mips"
        || arch == "mipsel"
        || arch == "powerpc"
        || arch == "sparc"
        || arch == "xtensa"
        || arch == "csky"
        || arch == "hexagon"
        || arch == "m68k"
        || arch == "avr"
        || arch == "msp430"
}

/// The target a build script builds for (`TARGET`), else the host this runs on.
pub fn current_target() -> String {
    std::env::var("TARGET").unwrap_or_else(|_| {
        let bits = if cfg!(target_pointer_width = "64") {
            "64-bit"
        } else {
            "32-bit"
        };
        format!("{}-host ({bits})", std::env::consts::ARCH)
    })
}

/// Bytes of statics an arena becomes: its writable `static` (none when the application
/// binds it) and its blob.
fn static_bytes(a: &ArenaEntry) -> u64 {
    let writable = if a.section.is_some() && !a.app_bound {
        a.size
    } else {
        0
    };
    writable.saturating_add(a.blob.as_ref().map_or(0, |b| b.size))
}

/// Refuses arenas (of model or group `name`, from manifest `source`) whose statics together
/// pass what `limit`'s target links.
pub fn check<'a>(
    arenas: impl Iterator<Item = &'a ArenaEntry>,
    name: &str,
    source: &std::path::Path,
    limit: &LinkLimit,
) -> Result<(), Error> {
    let mut parts: Vec<(String, u64)> = arenas
        .map(|a| (a.name.clone(), static_bytes(a)))
        .filter(|(_, b)| *b > 0)
        .collect();
    let total = parts.iter().fold(0u64, |t, (_, b)| t.saturating_add(*b));
    if total <= limit.max_total {
        return Ok(());
    }
    parts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let listed: Vec<String> = parts
        .iter()
        .map(|(n, b)| format!("{n} {b} bytes"))
        .collect();
    Err(Error::invalid_input(format!(
        "the arenas of {name} ({}) take {total} bytes of statics ({}), more than links on target {}: {}, and {PROGRAM_RESERVE} bytes of that are kept for the program's own code and statics, which leaves at most {} bytes of arenas; move the largest tensors to a memory the application binds (app_bound = true in memory.constraints, given at run time with from_buffers), or plan for a target that holds them",
        source.display(),
        listed.join(", "),
        limit.target,
        limit.why,
        limit.max_total
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_per_target() {
        let x = link_limit("x86_64-unknown-linux-gnu");
        assert_eq!(x.max_total, (1 << 31) - (256 << 20));
        assert_eq!(
            link_limit("thumbv8m.main-none-eabihf").max_total,
            (1 << 32) - (256 << 20)
        );
        assert_eq!(
            link_limit("riscv32imac-unknown-none-elf").max_total,
            (1 << 32) - (256 << 20)
        );
        assert_eq!(
            link_limit("aarch64-apple-darwin").max_total,
            (1 << 32) - (256 << 20)
        );
        assert_eq!(
            link_limit("riscv64gc-unknown-linux-gnu").max_total,
            x.max_total
        );
    }
}
