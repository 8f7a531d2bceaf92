//! Structured manifests: an `Arbitrary` description of a platform, constraints, rules,
//! slabs and an inline graph, written out as TOML and planned. Sizes, alignments and
//! origins are drawn from edge values (0, 1, 2^32, 2^63, 2^64 - 1, ...) as well as small
//! numbers, names from a set that collides after case folding and sanitising.
#![no_main]

#[path = "common.rs"]
mod common;
#[path = "../../planner-macros/src/props/values.rs"]
mod values;

use std::fmt::Write as _;
use std::path::Path;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use planner::manifest::Manifest;

use values::{DTYPES, EDGES, NAMES, size_lit};

const MEMORIES: [&str; 6] = ["SRAM", "sram", "DTCM", "S_RAM", "FLASH", "M1"];

#[derive(Arbitrary, Debug)]
enum Num {
    Small(u16),
    Edge(u8),
}

impl Num {
    fn value(&self) -> u64 {
        match self {
            Num::Small(v) => u64::from(*v),
            Num::Edge(i) => EDGES[usize::from(*i) % EDGES.len()],
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Mem {
    name: u8,
    size: Option<Num>,
    writable: bool,
    origin: Option<Num>,
}

#[derive(Arbitrary, Debug)]
struct T {
    name: u8,
    dtype: u8,
    shape: Option<Vec<u8>>,
    size: Option<Num>,
    kind: u8,
    alignment: Option<u8>,
    scale: Option<u8>,
}

#[derive(Arbitrary, Debug)]
struct O {
    inputs: Vec<u8>,
    outputs: Vec<u8>,
    scratch: Vec<u8>,
    reshape: bool,
}

#[derive(Arbitrary, Debug)]
struct Input {
    preset: Option<u8>,
    memories: Vec<Mem>,
    min_alignment: Option<u8>,
    constraints: Vec<(u8, Option<Num>, Option<u8>)>,
    rules: Vec<(u8, u8, Option<u8>)>,
    slabs: Vec<(u8, Num, bool)>,
    tensors: Vec<T>,
    ops: Vec<O>,
    alias_reshapes: bool,
    in_place: bool,
    memory_schedule: bool,
    planner: u8,
}

fn pick<'a>(list: &[&'a str], i: u8) -> &'a str {
    list[usize::from(i) % list.len()]
}

fn toml(inp: &Input) -> String {
    let mut s = String::from("[model]\nname = \"m\"\ntensors = [\n");
    let nt = inp.tensors.len().clamp(1, 12);
    for (i, t) in inp.tensors.iter().take(nt).enumerate() {
        let _ = write!(
            s,
            "  {{ id = \"{}{i}\", name = \"{}\", dtype = \"{}\"",
            pick(&NAMES, t.name),
            pick(&NAMES, t.name),
            pick(&DTYPES, t.dtype)
        );
        if let Some(shape) = &t.shape {
            let dims: Vec<String> = shape.iter().take(4).map(|d| d.to_string()).collect();
            let _ = write!(s, ", shape = [{}]", dims.join(", "));
        }
        if let Some(n) = &t.size {
            let _ = write!(s, ", size = {}", size_lit(n.value()));
        }
        match t.kind % 4 {
            1 => s.push_str(", constant = true"),
            2 => s.push_str(", variable = true"),
            _ => {}
        }
        if let Some(a) = t.alignment {
            let _ = write!(s, ", alignment = {}", 1u64 << (a % 20));
        }
        if let Some(q) = t.scale {
            let scale = ["0.5", "nan", "inf", "-inf", "1e-30"][usize::from(q) % 5];
            let _ = write!(
                s,
                ", quantization = {{ scale = [{scale}], zero_point = [0] }}"
            );
        }
        s.push_str(" },\n");
    }
    if inp.tensors.is_empty() {
        s.push_str("  { id = \"x\", dtype = \"i8\", shape = [4] },\n");
    }
    s.push_str("]\nops = [\n");
    let id = |k: &u8| {
        let k = usize::from(*k) % nt;
        match inp.tensors.get(k) {
            Some(t) => format!("\"{}{k}\"", pick(&NAMES, t.name)),
            None => "\"x\"".to_string(),
        }
    };
    for op in inp.ops.iter().take(12) {
        let list = |v: &[u8]| v.iter().take(3).map(id).collect::<Vec<_>>().join(", ");
        let _ = writeln!(
            s,
            "  {{ opcode = \"{}\", inputs = [{}], outputs = [{}], scratch = [{}] }},",
            if op.reshape { "RESHAPE" } else { "ADD" },
            list(&op.inputs),
            list(&op.outputs),
            list(&op.scratch)
        );
    }
    s.push_str("]\n\n[platform]\n");
    match inp.preset {
        Some(p) if inp.memories.is_empty() || p % 2 == 0 => {
            let _ = writeln!(
                s,
                "preset = \"{}\"",
                pick(planner::manifest::Platform::PRESETS, p)
            );
        }
        _ => {
            s.push_str("memories = [\n");
            for m in inp.memories.iter().take(4) {
                let _ = write!(
                    s,
                    "  {{ name = \"{}\", writable = {}",
                    pick(&MEMORIES, m.name),
                    m.writable
                );
                if let Some(n) = &m.size {
                    let _ = write!(s, ", size = {}", size_lit(n.value()));
                }
                if let Some(n) = &m.origin {
                    let _ = write!(s, ", origin = {}", size_lit(n.value()));
                }
                s.push_str(" },\n");
            }
            s.push_str("]\n");
        }
    }
    if let Some(a) = inp.min_alignment {
        let _ = writeln!(s, "min_alignment = {}", 1u64 << (a % 42));
    }
    s.push_str("\n[memory]\n");
    let planners = ["greedy", "greedy_by_size", "best_of_greedy"];
    let _ = writeln!(s, "planner = \"{}\"", pick(&planners, inp.planner));
    s.push_str("constraints = [\n");
    for (m, max, align) in inp.constraints.iter().take(3) {
        let _ = write!(s, "  {{ name = \"{}\"", pick(&MEMORIES, *m));
        if let Some(n) = max {
            let _ = write!(s, ", max_size = {}", size_lit(n.value()));
        }
        if let Some(a) = align {
            let _ = write!(s, ", arena_alignment = {}", 1u64 << (a % 42));
        }
        s.push_str(" },\n");
    }
    s.push_str("]\ntensors = [\n");
    for (kind, m, dest) in inp.rules.iter().take(3) {
        let kinds = ["constant", "scratch", "persistent"];
        let _ = write!(
            s,
            "  {{ type = \"{}\", attributes = {{ memory = \"{}\"",
            pick(&kinds, *kind),
            pick(&MEMORIES, *m)
        );
        if let Some(d) = dest {
            let _ = write!(
                s,
                ", constant_destination_memory = \"{}\"",
                pick(&MEMORIES, *d)
            );
        }
        s.push_str(" } },\n");
    }
    s.push_str("]\nslabs = [\n");
    for (k, (m, size, scratch)) in inp.slabs.iter().take(2).enumerate() {
        let _ = writeln!(
            s,
            "  {{ name = \"s{k}\", size = {}, memory = \"{}\", role = \"{}\" }},",
            size_lit(size.value()),
            pick(&MEMORIES, *m),
            if *scratch { "scratch" } else { "persistent" }
        );
    }
    s.push_str("]\n");
    let _ = writeln!(s, "alias_reshapes = {}", inp.alias_reshapes);
    if inp.in_place {
        s.push_str("in_place_ops = [\"ADD\"]\n");
    }
    if inp.memory_schedule {
        s.push_str("schedule = \"memory\"\n");
    }
    s
}

fuzz_target!(|inp: Input| {
    let text = toml(&inp);
    let manifest = match Manifest::parse(&text, Path::new("/nonexistent/fuzz.toml")) {
        Ok(m) => m,
        Err(e) => return common::expected(&e),
    };
    common::plan(manifest);
});
