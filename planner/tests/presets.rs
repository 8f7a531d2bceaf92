//! The board presets: their memory maps as the datasheets give them (a second copy of the
//! figures, so an edit of the table has to be made twice), and a bundled model planned on
//! each board, every arena inside the memory the preset gives it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use planner::manifest::{Manifest, Platform};
use planner::{Planned, plan_graph};

const K: u64 = 1024;
const M: u64 = 1024 * 1024;

fn model(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../models")
        .join(file)
}

/// Plans `file` (in `models/`) on `preset` with the weights read in place from `FLASH` and
/// `memory` as the `[memory]` lines besides that rule.
fn plan_on(preset: &str, file: &str, memory: &str) -> planner::Result<Planned> {
    let text = format!(
        "[model]\nname = \"m\"\nsource = {:?}\n\n[platform]\npreset = \"{preset}\"\n\n\
         [memory]\n{memory}\ntensors = [{{ type = \"constant\", attributes = {{ memory = \"FLASH\" }} }}]\n",
        model(file).display().to_string()
    );
    let m = Manifest::parse(&text, Path::new("presets.toml"))?;
    let g = planner::import::load(&m)?;
    let p = plan_graph(&m, &g)?;
    planner::verify::verify(&g, &p.plan).expect("the plan verifies");
    Ok(p)
}

/// Bytes the plan takes in each memory (every arena placed there, at run time).
fn bytes_per_memory(p: &Planned) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let plan = &p.plan;
    let arenas = plan.arena_usages.values();
    for a in arenas
        .chain(plan.persistent_arenas.values())
        .chain(plan.constant_arenas.values())
    {
        *out.entry(a.memory.clone()).or_insert(0) += a.used;
    }
    out
}

/// Plans `file` on `preset` and checks that every arena's memory is one of the preset's
/// and that the bytes placed in each memory fit its size; returns the bytes per memory.
fn fits(preset: &str, file: &str, memory: &str) -> BTreeMap<String, u64> {
    let platform = Platform::preset(preset).expect("a preset");
    let p = plan_on(preset, file, memory).unwrap_or_else(|e| panic!("{file} on {preset}: {e}"));
    let used = bytes_per_memory(&p);
    for (name, bytes) in &used {
        let m = platform
            .memory(name)
            .unwrap_or_else(|| panic!("{preset}: arena in memory {name}, not the preset's"));
        let size = m.size.expect("a board memory has a size");
        assert!(
            *bytes <= size,
            "{file} on {preset}: {bytes} bytes in {name}, of {size}"
        );
        assert!(*bytes > 0, "{file} on {preset}: empty arena in {name}");
    }
    assert!(
        used.contains_key("FLASH"),
        "{file} on {preset}: weights not in FLASH: {used:?}"
    );
    println!("{file} on {preset}: bytes per memory {used:?}");
    used
}

/// A line per preset, `preset: memory origin size rw|ro, ..`: the figures of the reference
/// manuals and datasheets the presets' doc comments cite (sizes in K or M of 1024).
const MAPS: &[&str] = &[
    "netduinoplus2: SRAM 0x2000_0000 128K rw, FLASH 0x0800_0000 1M ro",
    "stm32f405: SRAM 0x2000_0000 128K rw, CCM 0x1000_0000 64K rw, FLASH 0x0800_0000 1M ro",
    "stm32f407: SRAM 0x2000_0000 128K rw, CCM 0x1000_0000 64K rw, FLASH 0x0800_0000 1M ro",
    "stm32f446: SRAM 0x2000_0000 128K rw, FLASH 0x0800_0000 512K ro",
    "stm32f746: DTCM 0x2000_0000 64K rw, ITCM 0x0000_0000 16K rw, SRAM 0x2001_0000 256K rw, FLASH 0x0800_0000 1M ro",
    "nrf52840: SRAM 0x2000_0000 256K rw, FLASH 0x0000_0000 1M ro",
    "rp2040: SRAM 0x2000_0000 264K rw, FLASH 0x1000_0000 2M ro",
    "rp2350: SRAM 0x2000_0000 520K rw, FLASH 0x1000_0000 4M ro",
];

/// `MAPS`'s line as (preset, [(memory, origin, size, writable)]).
fn memory_map(line: &str) -> (&str, Vec<(&str, u64, u64, bool)>) {
    let (preset, memories) = line.split_once(": ").expect("`preset: memories`");
    let size = |n: &str| {
        let (digits, unit) = match n.strip_suffix('K') {
            Some(d) => (d, K),
            None => (n.strip_suffix('M').expect("a size in K or M"), M),
        };
        digits.parse::<u64>().expect("a number") * unit
    };
    let map = memories
        .split(", ")
        .map(|m| match m.split(' ').collect::<Vec<_>>()[..] {
            [name, origin, s, access] => {
                let origin = u64::from_str_radix(&origin[2..].replace('_', ""), 16);
                (name, origin.expect("a hex origin"), size(s), access == "rw")
            }
            _ => panic!("`name origin size rw|ro`: {m}"),
        })
        .collect();
    (preset, map)
}

#[test]
fn the_new_presets_have_the_datasheets_memory_maps() {
    for (preset, want) in MAPS.iter().map(|line| memory_map(line)) {
        assert!(Platform::PRESETS.contains(&preset), "{preset} not listed");
        let p = Platform::preset(preset).unwrap_or_else(|| panic!("no preset {preset}"));
        let got: Vec<(&str, u64, u64, bool)> = p
            .memories
            .iter()
            .map(|m| {
                (
                    m.name.as_str(),
                    m.origin.expect("origin"),
                    m.size.expect("size"),
                    m.writable,
                )
            })
            .collect();
        assert_eq!(got, want, "{preset}");
    }
}

#[test]
fn every_listed_preset_resolves_and_its_memories_are_disjoint() {
    for name in Platform::PRESETS {
        let p = Platform::preset(name).unwrap_or_else(|| panic!("{name} is listed, not a preset"));
        assert_eq!(p.name, *name);
        let mut spans: Vec<(u64, u64, &str)> = p
            .memories
            .iter()
            .filter_map(|m| Some((m.origin?, m.origin? + m.size?, m.name.as_str())))
            .collect();
        spans.sort();
        for w in spans.windows(2) {
            assert!(w[0].1 <= w[1].0, "{name}: {} overlaps {}", w[0].2, w[1].2);
        }
        let mut names: Vec<&str> = p.memories.iter().map(|m| m.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), p.memories.len(), "{name}: a memory name twice");
    }
    assert!(Platform::preset("stm32f4").is_none());
}

#[test]
fn an_unknown_preset_lists_every_preset() {
    let text =
        "[model]\nname = \"m\"\nsource = \"m.tflite\"\n\n[platform]\npreset = \"stm32f40\"\n";
    let e = Manifest::parse(text, Path::new("presets.toml"))
        .expect_err("an unknown preset is refused")
        .to_string();
    assert!(e.contains(&Platform::PRESETS.join(", ")), "{e}");
    assert!(e.contains("did you mean"), "{e}");
}

#[test]
fn person_detection_plans_on_netduinoplus2() {
    // The model examples/firmware-m4f runs on QEMU's netduinoplus2.
    let used = fits(
        "netduinoplus2",
        "tflm_person_detect_int8.tflite",
        "constraints = [{ name = \"SRAM\", max_size = \"96K\" }]",
    );
    assert_eq!(used.keys().collect::<Vec<_>>(), ["FLASH", "SRAM"]);
}

#[test]
fn person_detection_spills_from_sram_to_ccm_on_stm32f405_and_f407() {
    for preset in ["stm32f405", "stm32f407"] {
        // Without constraints the scratch fits SRAM, the first memory: CCM is left alone.
        let used = fits(preset, "tflm_person_detect_int8.tflite", "");
        assert!(!used.contains_key("CCM"), "{preset}: {used:?}");
        // With SRAM capped, the scratch spills into CCM.
        let used = fits(
            preset,
            "tflm_person_detect_int8.tflite",
            "constraints = [{ name = \"SRAM\", max_size = \"40K\" }, { name = \"CCM\" }]",
        );
        assert!(used.contains_key("CCM"), "{preset}: {used:?}");
        assert!(used["SRAM"] <= 40 * K, "{preset}: {used:?}");
    }
}

#[test]
fn keyword_spotting_plans_on_stm32f446() {
    fits("stm32f446", "tiny_kws_dscnn_int8.tflite", "");
}

#[test]
fn person_detection_plans_on_stm32f746_in_dtcm_then_sram() {
    let used = fits(
        "stm32f746",
        "tflm_person_detect_int8.tflite",
        "constraints = [{ name = \"DTCM\" }, { name = \"SRAM\" }]",
    );
    assert!(used.contains_key("DTCM"), "{used:?}");
}

#[test]
fn resnet8_plans_on_nrf52840() {
    fits("nrf52840", "tiny_ic_resnet8_int8.tflite", "");
}

#[test]
fn anomaly_detection_plans_on_rp2040() {
    fits("rp2040", "tiny_ad01_int8.tflite", "");
}

#[test]
fn mcunet_vww_plans_on_rp2350() {
    fits("rp2350", "te_mcunet_vww.tflite", "");
}

#[test]
fn a_model_larger_than_the_board_is_refused_naming_the_memory() {
    // mcunetv2_large's weights (2.2 MB) do not fit the F446's 512 KiB of flash.
    let e = plan_on("stm32f446", "te_mcunetv2_large.tflite", "")
        .map(|_| ())
        .expect_err("2.2 MB of weights do not fit 512 KiB of flash")
        .to_string();
    assert!(e.contains("FLASH"), "{e}");
}
