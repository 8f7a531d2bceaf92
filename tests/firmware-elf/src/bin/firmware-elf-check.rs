//! `firmware-elf-check ELF --script memory.x [--script fragment.x]...`: checks a linked
//! firmware image against the memory regions of its linker scripts and the arenas of its
//! plan, prints where each arena landed, and exits non-zero on any violation.

use std::path::PathBuf;
use std::process::ExitCode;

use firmware_elf::{Region, check, memory_regions};

struct Args {
    elf: PathBuf,
    scripts: Vec<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let usage = "usage: firmware-elf-check ELF --script LINKER_SCRIPT [--script LINKER_SCRIPT]...";
    let mut elf = None;
    let mut scripts = Vec::new();
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--script") => scripts.push(PathBuf::from(
                args.next()
                    .ok_or(format!("--script needs a path; {usage}"))?,
            )),
            Some(flag) if flag.starts_with("--") => {
                return Err(format!("unknown option {flag}; {usage}"));
            }
            _ if elf.is_none() => elf = Some(PathBuf::from(arg)),
            _ => return Err(format!("more than one ELF given; {usage}")),
        }
    }
    let elf = elf.ok_or(format!("no ELF given; {usage}"))?;
    if scripts.is_empty() {
        return Err(format!(
            "no linker script given, so no memory regions to check against; {usage}"
        ));
    }
    Ok(Args { elf, scripts })
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let elf = std::fs::read(&args.elf).map_err(|e| {
        format!(
            "cannot read firmware image {}: {e}; build the firmware first",
            args.elf.display()
        )
    })?;
    let mut regions: Vec<Region> = Vec::new();
    for script in &args.scripts {
        let text = std::fs::read_to_string(script)
            .map_err(|e| format!("cannot read linker script {}: {e}", script.display()))?;
        regions.extend(memory_regions(&text).map_err(|e| format!("{}: {e}", script.display()))?);
    }
    let reports = check(&elf, &regions, &[]).map_err(|v| format!("{}: {v}", args.elf.display()))?;
    println!(
        "firmware-elf-check: {} ok ({} arenas)",
        args.elf.display(),
        reports.len()
    );
    for r in &reports {
        println!("  {r}");
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("firmware-elf-check: {e}");
            ExitCode::FAILURE
        }
    }
}
