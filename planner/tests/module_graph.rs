//! No import cycle between the modules of a crate, at any depth: when `a` uses `crate::b`,
//! nothing in `b` may use `crate::a`, directly or through other modules; and inside a module,
//! when its child `a` uses its child `b` (`super::b`), nothing in `b` may use `a`. The modules of a crate then
//! form layers (the data model at the bottom, the pipeline and the outputs above it), and a
//! module can be read, tested and changed knowing only the ones below it.
//!
//! The edges come from the sources: every `crate::` and `super::` path (in `use` lines and in
//! code, brace groups `crate::{a, b}` included) outside comments and outside test modules
//! (`#[cfg(test)] mod tests { .. }` and files declared `#[cfg(test)] mod name;`), from the
//! file's module to the module it names, as an edge between the two children of their
//! closest common module. A module's own submodules are part of it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Edges = BTreeMap<String, BTreeMap<String, String>>;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The names of the files a source declares test-only (`#[cfg(test)]` then `mod name;`).
fn test_children(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for w in lines.windows(2) {
        if w[0] == "#[cfg(test)]" {
            let decl = w[1]
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ");
            if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                out.push(name.trim().to_string());
            }
        }
    }
    out
}

/// The text without comment lines, trailing comments and inline `#[cfg(test)]` modules.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|n| n.trim().starts_with("mod ") && n.trim().ends_with('{'))
        {
            // Skip the module: up to the line where its braces close.
            let mut depth = 0i64;
            for l in lines.by_ref() {
                depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
                if depth <= 0 {
                    break;
                }
            }
            continue;
        }
        if t.starts_with("//") {
            continue;
        }
        let code = match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The paths `code` names through `crate::` or `super::` (a group `p::{a, b::c}` gives
/// `p::a` and `p::b`), resolved against `module` (the path of the module the code is in) to
/// paths from the crate root. A path that climbs above the root is left out.
fn targets(code: &str, module: &[String]) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let starts = (rest.starts_with("crate::") || rest.starts_with("super::"))
            && (i == 0
                || !(bytes[i - 1].is_ascii_alphanumeric()
                    || bytes[i - 1] == b'_'
                    || bytes[i - 1] == b':'));
        if !starts {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        // The prefix: `crate`, or as many `super`s as there are; `None` above the root.
        let mut j = i;
        let base = if code[j..].starts_with("crate::") {
            j += "crate::".len();
            Some(Vec::new())
        } else {
            let mut here = module.to_vec();
            let mut inside = true;
            while code[j..].starts_with("super::") {
                j += "super::".len();
                inside &= here.pop().is_some();
            }
            inside.then_some(here)
        };
        let Some(mut path) = base else {
            i = j;
            continue;
        };
        // The named segments, then perhaps a group.
        loop {
            let name = ident(&code[j..]);
            if name.is_empty() {
                break;
            }
            j += name.len();
            path.push(name);
            if code[j..].starts_with("::") && !code[j + 2..].starts_with('{') {
                j += 2;
            } else {
                break;
            }
        }
        let group = code[j..]
            .strip_prefix("::{")
            .or_else(|| code[j..].strip_prefix('{'));
        if let Some(group) = group {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            // Top-level names of the group: those after `{` or a `,` at nesting depth 0.
            let mut depth = 0;
            let mut start = true;
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start => {
                        start = false;
                        let name = ident(&inner[k..]);
                        if !name.is_empty() {
                            let mut p = path.clone();
                            p.push(name);
                            out.insert(p);
                        }
                    }
                    _ => {}
                }
            }
        } else if !path.is_empty() {
            out.insert(path);
        }
        i = j.max(i + 1);
    }
    out
}

/// The path of the module a source file is (`lib.rs`: the root, `a/mod.rs`: `a`,
/// `a/b.rs`: `a::b`).
fn module_of(src: &Path, f: &Path) -> Vec<String> {
    let rel = f.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.strip_suffix(".rs").unwrap_or(&last).to_string();
    if !(matches!(stem.as_str(), "mod")
        || (parts.is_empty() && matches!(stem.as_str(), "lib" | "main")))
    {
        parts.push(stem);
    }
    parts
}

/// `module -> (used module -> a file that uses it)` between the child modules of each
/// module of the crate at `src`, keyed by their paths (`pack::greedy -> pack::gaps`): a use
/// of `a::b::x` from inside `a::c` is an edge `a::c -> a::b`.
fn edges(src: &Path) -> Edges {
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut skip = BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let dir = match f.file_stem().and_then(|s| s.to_str()) {
            Some("lib" | "main" | "mod") => f.parent().unwrap().to_path_buf(),
            Some(stem) => f.parent().unwrap().join(stem),
            None => continue,
        };
        for child in test_children(&text) {
            skip.insert(dir.join(format!("{child}.rs")));
            skip.insert(dir.join(&child).join("mod.rs"));
        }
    }
    // A test-only file's own children are test-only too.
    let skipped_dirs: Vec<PathBuf> = skip.iter().map(|f| f.with_extension("")).collect();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut out = Edges::new();
    for f in &files {
        if skip.contains(f) || skipped_dirs.iter().any(|d| f.starts_with(d)) {
            continue;
        }
        let from = module_of(src, f);
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(src).unwrap().display().to_string();
        for to in targets(&code(&text), &from) {
            // The first place the two paths part: two children of one module.
            let i = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if i >= from.len() || i >= to.len() {
                continue; // a use of an ancestor or of a descendant
            }
            let (a, b) = (from[..=i].to_vec(), to[..=i].to_vec());
            if !modules.contains(&b) && !modules.iter().any(|m| m.starts_with(&b)) {
                continue; // an item of the common module, not a child module
            }
            out.entry(a.join("::"))
                .or_default()
                .entry(b.join("::"))
                .or_insert_with(|| rel.clone());
        }
    }
    out
}

/// The strongly connected components with more than one module (Tarjan).
fn cycles(edges: &Edges) -> Vec<Vec<String>> {
    struct T<'a> {
        edges: &'a Edges,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        let next: Vec<&'a str> = t
            .edges
            .get(v)
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        for w in next {
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn report(crate_dir: &str) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(crate_dir)
        .join("src");
    let edges = edges(&src);
    let mut text = String::new();
    for comp in cycles(&edges) {
        text.push_str(&format!(
            "{crate_dir}: modules {} use each other in a cycle:\n",
            comp.join(", ")
        ));
        for a in &comp {
            for (b, file) in &edges[a] {
                if comp.contains(b) {
                    text.push_str(&format!("  {a} -> {b} (src/{file})\n"));
                }
            }
        }
    }
    text
}

#[test]
fn no_import_cycle_between_modules() {
    let text: String = [
        "planner",
        "planner-planfile",
        "planner-build",
        "planner-macros",
        "planner-kernels",
        "planner-rt",
    ]
    .iter()
    .map(|c| report(c))
    .collect();
    assert!(
        text.is_empty(),
        "{text}fix: move the shared type or function to the lower module, so the edge goes one way"
    );
}

#[test]
fn the_scan_sees_edges_and_cycles() {
    let text = code(
        "use crate::{a::X, b};\n// crate::c in a comment\nfn f() { crate::d::g() }\n\
         #[cfg(test)]\nmod tests {\n    use crate::e;\n}\n",
    );
    let found = targets(&text, &["x".to_string(), "y".to_string()]);
    let paths = |v: &[&[&str]]| -> BTreeSet<Vec<String>> {
        v.iter()
            .map(|p| p.iter().map(|s| s.to_string()).collect())
            .collect()
    };
    assert_eq!(found, paths(&[&["a"], &["b"], &["d", "g"]]));
    let nested = code("use super::{z, w::V};\nfn f() { super::super::q::r(); }\n");
    let found = targets(&nested, &["x".to_string(), "y".to_string()]);
    assert_eq!(found, paths(&[&["x", "z"], &["x", "w"], &["q", "r"]]));
    let mut e = Edges::new();
    e.entry("a".into())
        .or_default()
        .insert("b".into(), "a.rs".into());
    e.entry("b".into())
        .or_default()
        .insert("a".into(), "b.rs".into());
    e.entry("b".into())
        .or_default()
        .insert("c".into(), "b.rs".into());
    assert_eq!(cycles(&e), vec![vec!["a".to_string(), "b".to_string()]]);
}
