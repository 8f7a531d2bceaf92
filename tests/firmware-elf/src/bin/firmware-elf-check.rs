//! `firmware-elf-check ELF --script memory.x [--script X]... [--plan-dir OUT_DIR]
//! [--region MEMORY=REGION]...`: checks a linked firmware image against the memory regions
//! of its linker scripts and the arenas of every plan file (`*.plan.json`) in the plan
//! directory, prints where each arena landed, and exits non-zero on any violation. The work
//! is [`firmware_elf::firmware::check_firmware`].

use std::path::PathBuf;
use std::process::ExitCode;

use firmware_elf::firmware::{CheckOptions, check_firmware, parse_mapping};

const USAGE: &str = "usage: firmware-elf-check ELF --script LINKER_SCRIPT [--script LINKER_SCRIPT]... [--plan-dir DIR] [--region MEMORY=REGION]...";

const HELP: &str = "\
Checks a linked firmware ELF against its memory plan: every arena and weight blob of the plan
files in its OUT_DIR lies in its planned region, aligned, at its planned size, zero-filled
arenas take no file bytes, weights are the planned bytes, nothing overlaps.

usage: firmware-elf-check ELF --script LINKER_SCRIPT [--script LINKER_SCRIPT]... [--plan-dir DIR] [--region MEMORY=REGION]...

  ELF                      the linked firmware image (ELF32 little-endian)
  --script LINKER_SCRIPT   a linker script whose MEMORY block declares regions (memory.x);
                           repeatable
  --plan-dir DIR           the firmware's OUT_DIR (target/<triple>/<profile>/build/<crate>-*/out)
                           or its planner folder, where planner-build writes the *.plan.json,
                           blobs and linker fragments (the fragments' MEMORY blocks and
                           section placements are read too)
  --region MEMORY=REGION   the plan's memory MEMORY lives in the linker region REGION (such as
                           DTCM=RAM when memory.x makes DTCM cortex-m-rt's RAM); repeatable.
                           Without it, a section goes to the region its fragment places it in,
                           else to the region named like the memory
  -h, --help               this text

Exits 0 and prints where each arena landed, or 1 and every violation with its fix.";

enum Parsed {
    Check(CheckOptions),
    Help,
}

fn parse_args() -> Result<Parsed, String> {
    let mut elf = None;
    let mut options = CheckOptions::default();
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        let mut value =
            |flag: &str, what: &str| args.next().ok_or(format!("{flag} needs {what}; {USAGE}"));
        match arg.to_str() {
            Some("-h" | "--help") => return Ok(Parsed::Help),
            Some("--script") => options
                .scripts
                .push(PathBuf::from(value("--script", "a path")?)),
            Some("--plan-dir") => {
                options.plan_dir = Some(PathBuf::from(value("--plan-dir", "a path")?));
            }
            Some("--region") => {
                let v = value("--region", "MEMORY=REGION")?;
                let text = v
                    .to_str()
                    .ok_or(format!("--region {v:?} is not UTF-8; {USAGE}"))?;
                let (memory, region) = parse_mapping(text)?;
                options.regions.insert(memory, region);
            }
            Some(flag) if flag.starts_with('-') => {
                return Err(format!("unknown option {flag}; {USAGE} (--help says more)"));
            }
            _ if elf.is_none() => elf = Some(PathBuf::from(arg)),
            _ => return Err(format!("more than one ELF given; {USAGE}")),
        }
    }
    options.elf = elf.ok_or(format!("no ELF given; {USAGE}"))?;
    if options.scripts.is_empty() && options.plan_dir.is_none() {
        return Err(format!(
            "no linker script given, so no memory regions to check against; {USAGE}"
        ));
    }
    Ok(Parsed::Check(options))
}

fn main() -> ExitCode {
    let result = parse_args().and_then(|p| match p {
        Parsed::Help => {
            println!("{HELP}");
            Ok(None)
        }
        Parsed::Check(options) => check_firmware(&options).map(Some),
    });
    match result {
        Ok(Some(summary)) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Ok(None) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("firmware-elf-check: {e}");
            ExitCode::FAILURE
        }
    }
}
