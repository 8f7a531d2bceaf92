//! The built-in platforms (`[platform] preset = "..."`): one table, from which the preset
//! lookup ([`Platform::preset`]), the list of names ([`Platform::PRESETS`]) and the list
//! `planner plan --help` prints ([`preset_list`]) are all made.

use std::string::{String, ToString};
use std::vec::Vec;

use super::{K, M, Memory, Platform};

/// A built-in platform: its name, what it is, and its memories in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// What `[platform] preset` names it by.
    pub name: &'static str,
    /// The part or board, and where its memory map comes from.
    pub description: &'static str,
    memories: &'static [PresetMemory],
}

/// One memory of a preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PresetMemory {
    name: &'static str,
    /// Bytes; `None`: unlimited.
    size: Option<u64>,
    writable: bool,
    origin: Option<u64>,
}

const fn mem(name: &'static str, size: u64, writable: bool, origin: u64) -> PresetMemory {
    PresetMemory {
        name,
        size: Some(size),
        writable,
        origin: Some(origin),
    }
}

const fn preset(
    name: &'static str,
    description: &'static str,
    memories: &'static [PresetMemory],
) -> Preset {
    Preset {
        name,
        description,
        memories,
    }
}

/// Unlimited memories, at no address.
#[rustfmt::skip]
const HOST: &[PresetMemory] = &[
    PresetMemory { name: "SRAM", size: None, writable: true, origin: None },
    PresetMemory { name: "FLASH", size: None, writable: false, origin: None },
];

// SRAM1 112 KiB and SRAM2 16 KiB, contiguous; CCM (core-coupled memory) is on the core's data
// bus only: no DMA reaches it and no code runs from it, so keep buffers a peripheral fills by
// DMA out of it (a rule placing them in `SRAM`); it is second, so scratch takes it only when
// `SRAM` is full. FLASH of the xG parts.
const STM32F40X: &[PresetMemory] = &[
    mem("SRAM", 128 * K, true, 0x2000_0000),
    mem("CCM", 64 * K, true, 0x1000_0000),
    mem("FLASH", M, false, 0x0800_0000),
];

/// Every preset, in the order messages and help list them; `generic` first. Each memory:
/// name, bytes, writable, base address.
#[rustfmt::skip]
const TABLE: &[Preset] = &[
    preset("generic", "a host, no limits", HOST),
    // DDR at 0x6000_0000; the QSPI flash is what QEMU maps as ROM.
    preset("mps3-an547", "Arm's Cortex-M55 FPGA image, as QEMU maps it", &[
        mem("DTCM", 512 * K, true, 0x2000_0000), mem("ITCM", 512 * K, true, 0x0000_0000),
        mem("SRAM", 2 * M, true, 0x0100_0000), mem("DDR", 256 * M, true, 0x6000_0000),
        mem("FLASH", 8 * M, false, 0x2800_0000),
    ]),
    // QEMU 7.2 (`hw/arm/stm32f405_soc.c`, `info mtree`) maps 192 KiB of SRAM there, no CCM,
    // and the flash again at 0x0 (where the core boots); the preset takes the real part's
    // 128 KiB, so a plan for it runs on the real chip too.
    preset("netduinoplus2", "QEMU's netduinoplus2 machine (STM32F405RG, Cortex-M4F), examples/firmware-m4f", &[
        mem("SRAM", 128 * K, true, 0x2000_0000), mem("FLASH", M, false, 0x0800_0000),
    ]),
    preset("stm32f405", "ST Cortex-M4F (RM0090 2.3 memory map, DS8626); CCM is not reached by DMA", STM32F40X),
    preset("stm32f407", "ST Cortex-M4F (RM0090 2.3 memory map); CCM is not reached by DMA", STM32F40X),
    // SRAM1 112 KiB and SRAM2 16 KiB, contiguous.
    preset("stm32f446", "ST Cortex-M4F (RM0390 2.2 memory organization, DS10693)", &[
        mem("SRAM", 128 * K, true, 0x2000_0000), mem("FLASH", 512 * K, false, 0x0800_0000),
    ]),
    // SRAM1 240 KiB and SRAM2 16 KiB, contiguous; FLASH at its AXIM address.
    preset("stm32f746", "ST Cortex-M7 (RM0385 2.2 memory organization, DS10916)", &[
        mem("DTCM", 64 * K, true, 0x2000_0000), mem("ITCM", 16 * K, true, 0x0000_0000),
        mem("SRAM", 256 * K, true, 0x2001_0000), mem("FLASH", M, false, 0x0800_0000),
    ]),
    preset("stm32h743", "ST Cortex-M7 (RM0433 memory map)", &[
        mem("DTCM", 128 * K, true, 0x2000_0000), mem("ITCM", 64 * K, true, 0x0000_0000),
        mem("AXI_SRAM", 512 * K, true, 0x2400_0000), mem("SRAM123", 288 * K, true, 0x3000_0000),
        mem("SRAM4", 64 * K, true, 0x3800_0000), mem("FLASH", 2 * M, false, 0x0800_0000),
    ]),
    // OCRAM: 256 KiB FlexRAM OCRAM + 512 KiB OCRAM2 as one region from 0x2020_0000; FLASH is
    // the FlexSPI NOR of the Teensy 4.1 and the EVK boards.
    preset("imxrt1062", "NXP Cortex-M7, FlexRAM in its default split (Teensy 4.1, EVK)", &[
        mem("DTCM", 128 * K, true, 0x2000_0000), mem("ITCM", 128 * K, true, 0x0000_0000),
        mem("OCRAM", 768 * K, true, 0x2020_0000), mem("FLASH", 8 * M, false, 0x6000_0000),
    ]),
    // SRAM at the Data RAM address; the same RAM is Code RAM at 0x0080_0000.
    preset("nrf52840", "Nordic Cortex-M4F (nRF52840 Product Specification v1.7, 4.2 memory)", &[
        mem("SRAM", 256 * K, true, 0x2000_0000), mem("FLASH", M, false, 0x0000_0000),
    ]),
    // SRAM: the striped SRAM0-3, 256 KiB, then SRAM4 and SRAM5, 4 KiB each, contiguous.
    // FLASH: the XIP window of the external QSPI flash of the Pico (the chip has no internal
    // flash; its first 256 bytes are the boot2 stage).
    preset("rp2040", "Raspberry Pi dual Cortex-M0+ (RP2040 Datasheet 2.2, 2.6), Pico flash", &[
        mem("SRAM", 264 * K, true, 0x2000_0000), mem("FLASH", 2 * M, false, 0x1000_0000),
    ]),
    // SRAM: the striped SRAM0-7, 512 KiB, then SRAM8 and SRAM9, 4 KiB each, contiguous.
    // FLASH: the XIP window of the external QSPI flash of the Pico 2.
    preset("rp2350", "Raspberry Pi dual Cortex-M33 with FPU (RP2350 Datasheet 2.2, 4.2), Pico 2 flash", &[
        mem("SRAM", 520 * K, true, 0x2000_0000), mem("FLASH", 4 * M, false, 0x1000_0000),
    ]),
];

/// The names of [`TABLE`], made when the crate compiles.
const NAMES: [&str; TABLE.len()] = crate::pack::names_of!(TABLE);

/// Every built-in platform, in the order [`Platform::PRESETS`] lists them.
pub fn presets() -> &'static [Preset] {
    TABLE
}

impl Preset {
    /// The platform it describes.
    pub fn platform(&self) -> Platform {
        Platform {
            name: self.name.to_string(),
            memories: self
                .memories
                .iter()
                .map(|m| Memory {
                    name: m.name.to_string(),
                    size: m.size,
                    writable: m.writable,
                    readable_in_place: true,
                    origin: m.origin,
                })
                .collect(),
            min_alignment: 16,
        }
    }

    /// Its memories in a line: `DTCM 512K, ..., FLASH 8M read-only`.
    pub fn memory_summary(&self) -> String {
        let size = |s: Option<u64>| match s {
            None => "unlimited".to_string(),
            Some(b) if b % M == 0 => format!("{}M", b / M),
            Some(b) if b % K == 0 => format!("{}K", b / K),
            Some(b) => b.to_string(),
        };
        let each: Vec<String> = self
            .memories
            .iter()
            .map(|m| {
                let ro = if m.writable { "" } else { " read-only" };
                format!("{} {}{ro}", m.name, size(m.size))
            })
            .collect();
        each.join(", ")
    }
}

/// The presets one per line, as `planner plan --help` lists them: name, description,
/// memories.
pub fn preset_list() -> String {
    let width = TABLE.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let mut s = String::from("Platform presets (`[platform] preset = \"NAME\"` in a manifest):\n");
    for p in TABLE {
        s.push_str(&format!(
            "  {:width$}  {}: {}\n",
            p.name,
            p.description,
            p.memory_summary()
        ));
    }
    s
}

impl Platform {
    /// Names of the built-in presets ([`presets`] has each one's description and memories).
    pub const PRESETS: &'static [&'static str] = &NAMES;

    /// A built-in platform by name; [`presets`] lists them, with where each memory map comes
    /// from.
    pub fn preset(name: &str) -> Option<Platform> {
        TABLE.iter().find(|p| p.name == name).map(Preset::platform)
    }

    /// The `generic` preset: an unlimited writable `SRAM` and an unlimited read-only
    /// `FLASH`, the platform of a manifest without `[platform]`.
    pub fn generic() -> Platform {
        TABLE[0].platform()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_makes_the_lookup_the_names_and_the_list() {
        assert_eq!(Platform::PRESETS.len(), TABLE.len());
        assert_eq!(Platform::generic(), Platform::preset("generic").unwrap());
        assert_eq!(Platform::generic().memories[0].size, None);
        let an547 = Platform::preset("mps3-an547").unwrap();
        assert_eq!(an547.memory("DDR").unwrap().origin, Some(0x6000_0000));
        let list = preset_list();
        assert_eq!(list.lines().count(), TABLE.len() + 1);
        assert!(
            list.contains("  stm32f405      ST Cortex-M4F (RM0090 2.3 memory map, DS8626); CCM is not reached by DMA: SRAM 128K, CCM 64K, FLASH 1M read-only\n"),
            "{list}"
        );
        assert!(Platform::preset("stm32f4").is_none());
    }
}
