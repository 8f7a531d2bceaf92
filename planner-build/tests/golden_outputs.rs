//! Every file `generate` and `generate_group` write (plan file, blobs, linker fragment, C
//! headers, `memory.x`, SVG) is byte-for-byte what it was when the digests were recorded, for
//! every bundled model (its default manifest), every example manifest and every group
//! manifest of the repository, under four sets of options: refactors of the build path must
//! not change one byte.
//!
//! The digests (FNV-1a 64 of each file, of the warnings and of the error when one is
//! refused) are in `tests/data/output_digests.txt`. When a change is meant to alter outputs,
//! rewrite them with `UPDATE_GOLDEN=1 cargo test -p planner-build --test golden_outputs` and
//! say why in the commit.
//!
//! Paths are relative to this crate (the test's working directory), so the manifest paths
//! written into fragments and headers are the same on every machine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use planner::manifest::{self, Manifest};
use planner::planfile::fnv1a64;
use planner_build::{MemoryXLayout, Options, generate, generate_group};

/// Manifests of one model (`false`) or a group (`true`), relative to this crate.
fn inputs() -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    let mut models: Vec<PathBuf> = std::fs::read_dir("../models")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tflite"))
        .collect();
    models.sort();
    out.extend(models.into_iter().map(|m| (m, false)));
    let mut manifests = Vec::new();
    for dir in [
        "../examples",
        "../tests/ui/plans",
        "../tests/data/accept_compile_failures",
        "../planner/tests/data/groups",
        "../planner/tests/data/repro/turn3",
    ] {
        tomls(Path::new(dir), &mut manifests);
    }
    manifests.sort();
    for m in manifests {
        let group = manifest::lists_models(&m).unwrap();
        out.push((m, group));
    }
    out
}

/// Every `*.toml` under `dir` but cargo's own files.
fn tomls(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            if name != ".cargo" && name != "target" {
                tomls(&p, out);
            }
        } else if p.extension().is_some_and(|e| e == "toml")
            && name != "Cargo.toml"
            && name != "config.toml"
        {
            out.push(p);
        }
    }
}

/// The four option sets: the defaults; everything on (SVG, `memory.x` with the first
/// read-only memory as cortex-m-rt's FLASH and the first writable one as its RAM); and a host
/// build (no regions, DTCM renamed, no header); SVG alone (for platforms without
/// origins, where `memory.x` is refused).
fn option_sets(m: Option<&Manifest>) -> Vec<(&'static str, Options)> {
    let memories = m
        .map(|m| m.platform.memories.as_slice())
        .unwrap_or_default();
    let flash = memories.iter().find(|m| !m.writable).or(memories.first());
    let ram = memories.iter().find(|m| m.writable).or(memories.first());
    let all = Options {
        svg: true,
        memory_x: flash.zip(ram).map(|(f, r)| MemoryXLayout {
            flash: f.name.clone(),
            ram: r.name.clone(),
        }),
        ..Options::default()
    };
    let host = Options {
        c_header: false,
        place_in_regions: false,
        regions: BTreeMap::from([("DTCM".to_string(), "RAM".to_string())]),
        ..Options::default()
    };
    let svg = Options {
        svg: true,
        ..Options::default()
    };
    vec![
        ("default", Options::default()),
        ("all", all),
        ("host", host),
        ("svg", svg),
    ]
}

fn digest(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a64(bytes))
}

type Outcome = Result<(BTreeMap<String, Vec<u8>>, Vec<String>, u64), String>;

/// What `generate` (or `generate_group`) makes of the manifest at `path` under each option
/// set.
fn outcomes(path: &Path, group: bool) -> Vec<(&'static str, Outcome)> {
    if group {
        let planned =
            manifest::load_group(path).and_then(|g| planner::plan_group(&g).map(|p| (g, p)));
        let first = planned.as_ref().ok().and_then(|(g, _)| g.models.first());
        return under_each_set(&planned, first, |(g, p), options| {
            generate_group(g, p, options)
                .map(|g| (g.files, g.warnings, g.plan_hash))
                .map_err(|e| e.to_string())
        });
    }
    let manifest = if path.extension().is_some_and(|e| e == "tflite") {
        Ok(Manifest::for_model_file(path))
    } else {
        manifest::load(path)
    };
    let planned = manifest.and_then(|m| {
        let graph = planner::import::load(&m)?;
        planner::plan_graph(&m, &graph).map(|p| (m, p))
    });
    let m = planned.as_ref().ok().map(|(m, _)| m);
    under_each_set(&planned, m, |(m, p), options| {
        generate(m, p, options)
            .map(|g| (g.files, g.warnings, g.plan_hash))
            .map_err(|e| e.to_string())
    })
}

/// What `run` makes of the `planned` input under each option set of the manifest `first`,
/// or the planning error under each.
fn under_each_set<T>(
    planned: &Result<T, planner::Error>,
    first: Option<&Manifest>,
    run: impl Fn(&T, &Options) -> Outcome,
) -> Vec<(&'static str, Outcome)> {
    option_sets(first)
        .into_iter()
        .map(|(set, options)| {
            let out = match planned {
                Ok(p) => run(p, &options),
                Err(e) => Err(e.to_string()),
            };
            (set, out)
        })
        .collect()
}

/// One line per output file (`<input> <options> <file> <digest>`), one for the warnings and
/// one for the plan hash; or one for the error.
fn digests_of(name: &str, path: &Path, group: bool, out: &mut BTreeMap<String, String>) {
    for (set, result) in outcomes(path, group) {
        let key = format!("{name} {set}");
        match result {
            Ok((files, warnings, hash)) => {
                for (file, bytes) in files {
                    out.insert(format!("{key} {file}"), digest(&bytes));
                }
                out.insert(
                    format!("{key} (warnings)"),
                    digest(warnings.join("\n").as_bytes()),
                );
                out.insert(format!("{key} (hash)"), format!("{hash:016x}"));
            }
            Err(e) => {
                out.insert(format!("{key} (error)"), digest(e.as_bytes()));
            }
        }
    }
}

fn digests() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (path, group) in inputs() {
        let name = path.display().to_string();
        digests_of(&name, &path, group, &mut out);
    }
    out
}

#[test]
fn outputs_are_byte_identical_to_the_recorded_ones() {
    let path = Path::new("tests/data/output_digests.txt");
    let now = digests();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text: String = now.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
        std::fs::write(path, text).unwrap();
        return;
    }
    let stored = std::fs::read_to_string(path).unwrap();
    let stored: BTreeMap<String, String> = stored
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut diffs = Vec::new();
    for key in stored.keys().chain(now.keys()) {
        let (a, b) = (stored.get(key), now.get(key));
        if a != b && !diffs.iter().any(|(k, _, _)| k == key) {
            diffs.push((key.clone(), a.cloned(), b.cloned()));
        }
    }
    assert!(
        diffs.is_empty(),
        "{} outputs differ from tests/data/output_digests.txt (recorded, now):\n{}",
        diffs.len(),
        diffs
            .iter()
            .map(|(k, a, b)| format!("  {k}: {a:?} -> {b:?}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Every group manifest planned and wrote its plan: the digests cover the group path.
    let groups = now
        .keys()
        .filter(|k| k.contains("/groups/") && k.ends_with(".plan.json"))
        .count();
    assert!(groups >= 9, "{groups} group plan files");
}
