//! Every name the build helper and the macro generate: identifiers, section names, symbol
//! names, file names. One place, so the plan file, the linker fragment, the C header and
//! the Rust expansion always agree, and the same model always gets the same names.

use std::collections::{BTreeMap, BTreeSet};

use crate::ArenaRole;

/// Longest identifier made from a tensor name, before a uniqueness suffix.
const MAX_IDENT: usize = 48;

/// `snake_case` identifier from any text: ASCII letters and digits kept (a capital after a
/// lowercase letter or digit starts a new word), every other run of characters becomes
/// one `_`; never empty, never starts with a digit. Generated code uses it after a prefix
/// (`tensor_`, `input_`) or upper-cased, so a keyword is fine; [`model_module`] guards the
/// one standalone use.
pub fn ident(text: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && prev_lower && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    let mut out = out.trim_matches('_').to_string();
    if out.len() > MAX_IDENT {
        out.truncate(MAX_IDENT);
        out = out.trim_end_matches('_').to_string();
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 't');
    }
    out
}

/// `SCREAMING_SNAKE_CASE` of [`ident`].
pub fn const_ident(text: &str) -> String {
    ident(text).trim_end_matches('_').to_ascii_uppercase()
}

/// `UpperCamelCase` of [`ident`].
pub fn type_ident(text: &str) -> String {
    ident(text)
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn is_keyword(s: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod",
        "move", "mut", "pub", "ref", "return", "self", "static", "struct", "super", "trait",
        "true", "type", "unsafe", "use", "where", "while", "abstract", "become", "box", "do",
        "final", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
    ];
    KEYWORDS.contains(&s)
}

/// Unique identifiers for a list of names, in order: [`ident`] of each, with `_<index>`
/// appended to every name whose identifier another name also makes.
///
/// Generated code uses each identifier `x` as `x` and as `x_mut` (`tensor_x`,
/// `tensor_x_mut`), so an identifier that is another's plus `_mut` counts as taken too: `a`
/// and `a_mut` become `a` and `a_mut_1`, and no two accessors ever share a name.
pub fn unique_idents<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let base: Vec<String> = names.into_iter().map(ident).collect();
    let mut seen = BTreeSet::new();
    let mut dup = BTreeSet::new();
    for b in &base {
        if !seen.insert(b.as_str()) {
            dup.insert(b.clone());
        }
    }
    for b in &base {
        if b.strip_suffix("_mut").is_some_and(|x| seen.contains(x)) {
            dup.insert(b.clone());
        }
    }
    let mut taken: BTreeSet<String> = base.iter().filter(|b| !dup.contains(*b)).cloned().collect();
    base.iter()
        .enumerate()
        .map(|(i, b)| {
            if !dup.contains(b) {
                return b.clone();
            }
            // Ends in a digit or `_`, so it is never another name plus `_mut`.
            let mut n = format!("{}_{i}", b.trim_end_matches('_'));
            while taken.contains(&n) || taken.contains(&format!("{n}_mut")) {
                n.push('_');
            }
            taken.insert(n.clone());
            n
        })
        .collect()
}

/// The module `include_model!` puts a model's items in.
pub fn model_module(model: &str) -> String {
    let mut m = ident(model);
    if is_keyword(&m) {
        m.push_str("_model");
    }
    m
}

/// The method of a group's handle that lends model `model`'s handle: its module's name,
/// with `_model` after the names of the handle's own methods (`take`, `init`,
/// `from_buffers`, `arena_ptrs`).
pub fn group_method(model: &str) -> String {
    let m = model_module(model);
    if GROUP_HANDLE_METHODS.contains(&m.as_str()) {
        format!("{m}_model")
    } else {
        m
    }
}

/// Methods every group handle has, which no lending method may take.
const GROUP_HANDLE_METHODS: [&str; 4] = ["arena_ptrs", "from_buffers", "init", "take"];

/// The method of a group's handle that lends the handles of a `concurrent` set's models
/// together: their [`group_method`]s joined by `_and_` (`kws_and_vww`).
pub fn set_method<'a>(models: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<String> = models.into_iter().map(group_method).collect();
    names.join("_and_")
}

/// Who makes a name in a group's generated code: model `k` or `concurrent` set `k` of the
/// group (indices in manifest order), or the generator itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameOwner {
    /// Model `k` (`model[k]` in the manifest).
    Model(usize),
    /// Concurrent set `k` (`group.concurrent[k]`).
    Set(usize),
    /// A fixed name of the generated code.
    Fixed,
}

/// Two owners that make the same name in one namespace of a group's generated code: one
/// would hide or redefine the other, or one file would overwrite the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameClash {
    /// What the name is (`"module"`, `"method of the group handle"`, ...).
    pub what: &'static str,
    /// The name both make.
    pub name: String,
    /// The owner listed first.
    pub first: NameOwner,
    /// The owner listed later.
    pub second: NameOwner,
}

/// Every name a group's generated code derives from its models' names (`models`, manifest
/// order) and its `concurrent` sets (`sets`, indices into `models`), with what it is and
/// who makes it: the module of each model and its C macro prefix, header and drawing file,
/// and the lending methods of the group handle with the handle's own methods. Names in
/// one namespace (the same `what`) must all differ.
pub fn group_names(models: &[&str], sets: &[Vec<usize>]) -> Vec<(&'static str, String, NameOwner)> {
    let mut out = Vec::new();
    for (k, m) in models.iter().enumerate() {
        let owner = NameOwner::Model(k);
        out.push(("module", model_module(m), owner));
        out.push(("C macro prefix", c_prefix(m), owner));
        out.push(("C header file", header_file(m), owner));
        // Drawings are named by the model as written; compared lowercase, as a
        // case-insensitive file system does.
        out.push(("SVG file", format!("{}.svg", m.to_ascii_lowercase()), owner));
    }
    const METHOD: &str = "method of the group handle";
    for m in GROUP_HANDLE_METHODS {
        out.push((METHOD, m.to_string(), NameOwner::Fixed));
    }
    for (k, m) in models.iter().enumerate() {
        out.push((METHOD, group_method(m), NameOwner::Model(k)));
    }
    for (k, set) in sets.iter().enumerate() {
        let names = set.iter().filter_map(|&i| models.get(i).copied());
        out.push((METHOD, set_method(names), NameOwner::Set(k)));
    }
    out
}

/// The first two owners that make the same name in a group ([`group_names`]), if any.
pub fn group_clash(models: &[&str], sets: &[Vec<usize>]) -> Option<NameClash> {
    let mut seen: BTreeMap<(&'static str, String), NameOwner> = BTreeMap::new();
    for (what, name, owner) in group_names(models, sets) {
        match seen.get(&(what, name.clone())) {
            Some(&first) => {
                return Some(NameClash {
                    what,
                    name,
                    first,
                    second: owner,
                });
            }
            None => {
                seen.insert((what, name), owner);
            }
        }
    }
    None
}

/// Lowercase word for a name inside a section or symbol name: ASCII letters, digits, `_`.
fn word(text: &str) -> String {
    ident(text).trim_end_matches('_').to_string()
}

/// `role.MEMORY`: how messages, the plan file and `BindError` name an arena.
pub fn arena_name(role: ArenaRole, memory: &str) -> String {
    format!("{}.{memory}", role.name())
}

/// The field of `Buffers` and the suffix of `bind_*` for an arena: `scratch_sram`.
pub fn arena_field(role: ArenaRole, memory: &str) -> String {
    format!("{}_{}", role.name(), word(memory))
}

/// The `static` holding an arena's writable bytes: `SCRATCH_SRAM`.
pub fn arena_static(role: ArenaRole, memory: &str) -> String {
    arena_field(role, memory).to_ascii_uppercase()
}

/// The `static` holding a constant arena's blob, in its source memory:
/// `CONSTANT_FLASH_BLOB`.
pub fn blob_static(memory: &str) -> String {
    format!("{}_BLOB", arena_static(ArenaRole::Constant, memory))
}

/// Section of a zero-filled arena (scratch, persistent, the runtime copy of a staged
/// constant): `.bss.planner.<model>.<role>.<memory>`, so it costs no file bytes.
pub fn zeroed_section(model: &str, role: ArenaRole, memory: &str) -> String {
    format!(
        ".bss.planner.{}.{}.{}",
        word(model),
        role.name(),
        word(memory)
    )
}

/// Section of a constant blob, in the memory it is read from (`source`):
/// `.rodata.planner.<model>.constant.<source>` for weights read in place, and
/// `.rodata.planner.<model>.constant.<source>.to_<memory>` for a staged arena's blob, which
/// `init()` copies into `memory`.
pub fn blob_section(model: &str, source: &str, memory: &str) -> String {
    let base = format!(".rodata.planner.{}.constant.{}", word(model), word(source));
    if source == memory {
        base
    } else {
        format!("{base}.to_{}", word(memory))
    }
}

/// The linker output section for an input section: the input name without its
/// `.bss`/`.rodata` prefix (`.planner.<model>.<role>.<memory>`).
pub fn output_section(section: &str) -> String {
    section
        .strip_prefix(".bss")
        .or_else(|| section.strip_prefix(".rodata"))
        .unwrap_or(section)
        .to_string()
}

/// Linker symbol at the start (`end == false`) or end of an arena's output section.
pub fn linker_symbol(section: &str, end: bool) -> String {
    let body = output_section(section)
        .trim_start_matches('.')
        .replace('.', "_");
    format!("__{body}_{}", if end { "end" } else { "start" })
}

/// Prefix of every C macro and type in the header: `PLANNER_<MODEL>`.
pub fn c_prefix(model: &str) -> String {
    format!("PLANNER_{}", const_ident(model))
}

/// File name of the plan file in the output directory.
pub fn plan_file(model: &str) -> String {
    format!("{}.plan.json", word(model))
}

/// File name of a constant arena's blob.
pub fn blob_file(model: &str, memory: &str) -> String {
    format!("{}.constant.{}.bin", word(model), word(memory))
}

/// File name of the linker-script fragment.
pub fn linker_file(model: &str) -> String {
    format!("planner_{}.x", word(model))
}

/// File name of the C header.
pub fn header_file(model: &str) -> String {
    format!("planner_{}.h", word(model))
}

/// Module of a model's kernel traits for ops without typed options.
pub const OP_KINDS_MODULE: &str = "op_kinds";

/// Trait names, in [`OP_KINDS_MODULE`], for distinct opcodes without typed options
/// (`"SQUARED_DIFFERENCE"` → `SquaredDifference`, `"CUSTOM:SignalWindow"` →
/// `CustomSignalWindow`); two opcodes that would share a name get `_<index>` appended
/// (which [`type_ident`] never makes, so no other name is taken).
pub fn op_kind_traits<'a>(opcodes: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let base: Vec<String> = opcodes.into_iter().map(type_ident).collect();
    base.iter()
        .enumerate()
        .map(|(i, b)| {
            if base.iter().filter(|x| *x == b).count() > 1 {
                format!("{b}_{i}")
            } else {
                b.clone()
            }
        })
        .collect()
}

/// Method giving op `k`'s view, and the view struct's name.
pub fn op_view(k: usize) -> (String, String) {
    (format!("op{k}"), format!("Op{k}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_kind_traits_are_camel_case_and_distinct() {
        assert_eq!(
            op_kind_traits([
                "SQUARED_DIFFERENCE",
                "CUSTOM:SignalWindow",
                "CUSTOM:Signal-Window",
                "BUILTIN:250"
            ]),
            [
                "SquaredDifference",
                "CustomSignalWindow_1",
                "CustomSignalWindow_2",
                "Builtin250"
            ]
        );
    }

    #[test]
    fn identifiers_are_snake_case_and_valid() {
        assert_eq!(
            ident("sequential/dense_2/MatMul"),
            "sequential_dense_2_mat_mul"
        );
        assert_eq!(
            ident("serving_default_dense_input:0"),
            "serving_default_dense_input_0"
        );
        assert_eq!(ident("3x"), "t3x");
        assert_eq!(ident(";;"), "t");
        assert_eq!(ident("in"), "in");
        assert_eq!(model_module("type"), "type_model");
        assert_eq!(const_ident("type"), "TYPE");
        assert_eq!(type_ident("hello_world"), "HelloWorld");
        assert!(ident(&"a".repeat(100)).len() <= MAX_IDENT);
    }

    #[test]
    fn duplicates_get_index_suffixes() {
        assert_eq!(unique_idents(["a:0", "a/0", "b"]), ["a_0_0", "a_0_1", "b"]);
        assert_eq!(unique_idents(["x", "x", "x_1"]), ["x_0", "x_1_", "x_1"]);
        assert_eq!(unique_idents(["a", "a_mut", "b"]), ["a", "a_mut_1", "b"]);
        assert_eq!(unique_idents(["a_mut", "A"]), ["a_mut_0", "a"]);
        assert_eq!(
            unique_idents(["a", "a_mut", "a_mut_1_mut"]),
            ["a", "a_mut_1_", "a_mut_1_mut"]
        );
    }

    #[test]
    fn group_names_that_clash() {
        let clash = |models: &[&str], sets: &[Vec<usize>]| {
            group_clash(models, sets).map(|c| (c.what, c.name, c.first, c.second))
        };
        use NameOwner::{Fixed, Model, Set};
        assert_eq!(clash(&["kws", "vww"], &[vec![0, 1]]), None);
        assert_eq!(
            clash(&["A", "a"], &[]),
            Some(("module", "a".to_string(), Model(0), Model(1)))
        );
        assert_eq!(
            clash(&["_x", "x"], &[]),
            Some(("module", "x".to_string(), Model(0), Model(1)))
        );
        let long = ["a".repeat(48) + "bbb", "a".repeat(48) + "ccc"];
        let c = clash(&[&long[0], &long[1]], &[]).unwrap();
        assert_eq!((c.0, c.2, c.3), ("module", Model(0), Model(1)));
        assert_eq!(
            clash(&["type", "type_model"], &[]),
            Some(("module", "type_model".to_string(), Model(0), Model(1)))
        );
        let m = "method of the group handle";
        assert_eq!(
            clash(&["a", "b", "a_and_b"], &[vec![0, 1]]),
            Some((m, "a_and_b".to_string(), Model(2), Set(0)))
        );
        assert_eq!(
            clash(&["a", "b"], &[vec![0, 1], vec![0, 1]]),
            Some((m, "a_and_b".to_string(), Set(0), Set(1)))
        );
        assert_eq!(clash(&["a", "b"], &[vec![0, 1], vec![1, 0]]), None);
        for fixed in ["take", "init", "arena_ptrs", "from_buffers"] {
            let renamed = format!("{fixed}_model");
            assert_eq!(
                clash(&[fixed, &renamed], &[]),
                Some((m, renamed.clone(), Model(0), Model(1)))
            );
            assert_eq!(group_method(fixed), renamed);
        }
        assert_eq!(
            clash(&["a_and", "b", "a", "and_b"], &[vec![0, 1], vec![2, 3]]),
            Some((m, "a_and_and_b".to_string(), Set(0), Set(1)))
        );
        // A fixed name is never a model's: those get `_model`.
        assert!(
            group_names(&["take"], &[])
                .iter()
                .all(|(w, n, o)| *w != m || *o == Fixed || n != "take")
        );
    }

    #[test]
    fn sections_and_symbols() {
        let s = zeroed_section("Hello World", ArenaRole::Scratch, "SRAM");
        assert_eq!(s, ".bss.planner.hello_world.scratch.sram");
        assert_eq!(output_section(&s), ".planner.hello_world.scratch.sram");
        assert_eq!(
            linker_symbol(&s, false),
            "__planner_hello_world_scratch_sram_start"
        );
        assert_eq!(
            blob_section("kws", "FLASH", "FLASH"),
            ".rodata.planner.kws.constant.flash"
        );
        assert_eq!(
            blob_section("kws", "FLASH", "DTCM"),
            ".rodata.planner.kws.constant.flash.to_dtcm"
        );
        assert_eq!(
            arena_static(ArenaRole::Persistent, "DTCM"),
            "PERSISTENT_DTCM"
        );
        assert_eq!(blob_static("FLASH"), "CONSTANT_FLASH_BLOB");
    }
}
