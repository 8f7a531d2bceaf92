//! `firmware-elf-check ELF --script memory.x [--script X]... [--plan-dir OUT_DIR]`: checks a
//! linked firmware image against the memory regions of its linker scripts and the arenas of
//! every plan file (`*.plan.json`) in the plan directory, prints where each arena landed,
//! and exits non-zero on any violation.

use std::path::PathBuf;
use std::process::ExitCode;

use firmware_elf::{ExpectedArena, Region, check, memory_regions, plan};

const USAGE: &str = "usage: firmware-elf-check ELF --script LINKER_SCRIPT [--script LINKER_SCRIPT]... [--plan-dir DIR]";

struct Args {
    elf: PathBuf,
    scripts: Vec<PathBuf>,
    plan_dir: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut elf = None;
    let mut scripts = Vec::new();
    let mut plan_dir = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| {
            args.next()
                .map(PathBuf::from)
                .ok_or(format!("{flag} needs a path; {USAGE}"))
        };
        match arg.to_str() {
            Some("--script") => scripts.push(value("--script")?),
            Some("--plan-dir") => plan_dir = Some(value("--plan-dir")?),
            Some(flag) if flag.starts_with("--") => {
                return Err(format!("unknown option {flag}; {USAGE}"));
            }
            _ if elf.is_none() => elf = Some(PathBuf::from(arg)),
            _ => return Err(format!("more than one ELF given; {USAGE}")),
        }
    }
    let elf = elf.ok_or(format!("no ELF given; {USAGE}"))?;
    if scripts.is_empty() {
        return Err(format!(
            "no linker script given, so no memory regions to check against; {USAGE}"
        ));
    }
    Ok(Args {
        elf,
        scripts,
        plan_dir,
    })
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let elf = std::fs::read(&args.elf).map_err(|e| {
        format!(
            "cannot read firmware image {}: {e}; build the firmware first",
            args.elf.display()
        )
    })?;
    let mut scripts = args.scripts.clone();
    let mut models = Vec::new();
    if let Some(dir) = &args.plan_dir {
        let plans = plan::find(dir)?;
        if plans.is_empty() {
            return Err(format!(
                "no plan file (*.plan.json) in {}; point --plan-dir at the firmware's OUT_DIR",
                dir.display()
            ));
        }
        for p in &plans {
            models.push(plan::load(p)?);
        }
        // Fragments may declare MEMORY regions of their own.
        for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            if path.extension().is_some_and(|x| x == "x") {
                scripts.push(path);
            }
        }
    }
    let mut regions: Vec<Region> = Vec::new();
    for script in &scripts {
        let text = std::fs::read_to_string(script)
            .map_err(|e| format!("cannot read linker script {}: {e}", script.display()))?;
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
    let arenas: Vec<ExpectedArena> = models.iter().flat_map(|m| m.arenas.clone()).collect();
    let reports =
        check(&elf, &regions, &arenas).map_err(|v| format!("{}:\n{v}", args.elf.display()))?;
    println!(
        "firmware-elf-check: {} ok: {} arenas of {} models in their planned regions",
        args.elf.display(),
        reports.len(),
        models.len()
    );
    for r in &reports {
        println!("  {r}");
    }
    for note in models.iter().flat_map(|m| &m.notes) {
        println!("  {note}");
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
