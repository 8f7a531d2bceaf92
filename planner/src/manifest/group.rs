//! Group manifests: several `[[model]]` tables over one `[platform]` and one `[memory]`.
//!
//! ```toml
//! [group]
//! name = "sensors"
//! concurrent = [["kws", "vww"]]   # may run at the same time; by default one after another
//!
//! [[model]]
//! name = "kws"
//! source = "kws.tflite"
//! rules = [ { type = "constant", attributes = { memory = "FLASH" } } ]
//!
//! [[model]]
//! name = "vww"
//! source = "vww.tflite"
//! ```
//!
//! Each model gets the shared `memory.tensors` rules, then its own `rules` (same shape),
//! which win at equal precedence. A single-model manifest (`[model]`) is a group of one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

use toml::Spanned;

use super::check::{Shared, check_name};
use super::ctx::{Ctx, toml_error};
use super::schema::{RawGroup, RawGroupManifest};
use super::{Manifest, sanitize_name};
use crate::error::{Error, Result, did_you_mean};
use crate::naming::{self, NameOwner};

/// Several models planned together: one platform, one set of bank constraints.
#[derive(Debug, Clone)]
pub struct Group {
    /// The file it was read from.
    pub path: PathBuf,
    /// Group name (`[group] name`, else the file's stem).
    pub name: String,
    /// The models, in file order; each a full manifest with the shared parts.
    pub models: Vec<Manifest>,
    /// Sets of models (indices into `models`) that may run at the same time. Models in no
    /// common set run one after another.
    pub concurrent: Vec<Vec<usize>>,
}

impl Group {
    /// A group of one model.
    pub fn single(manifest: Manifest) -> Group {
        Group {
            path: manifest.path.clone(),
            name: manifest.name.clone(),
            models: vec![manifest],
            concurrent: Vec::new(),
        }
    }

    /// True when models `a` and `b` (indices) are named together in some `concurrent` set.
    pub fn may_run_together(&self, a: usize, b: usize) -> bool {
        a != b
            && self
                .concurrent
                .iter()
                .any(|set| set.contains(&a) && set.contains(&b))
    }
}

/// Reads the manifest at `path` as a group: `[[model]]` tables (with an optional
/// `[group]`), or a single `[model]` (a group of one).
pub fn load_group(path: &Path) -> Result<Group> {
    let text = crate::limited::read_manifest(path)?;
    Group::parse(&text, path)
}

/// True when the manifest at `path` is a group manifest (`[[model]]` tables or a
/// `[group]` table), which `planner-build` plans as a group.
#[doc(hidden)]
pub fn lists_models(path: &Path) -> Result<bool> {
    let text = crate::limited::read_manifest(path)?;
    Ok(lists_many(&text))
}

/// True when the text lists several models (`[[model]]`) or has a `[group]` table.
fn lists_many(text: &str) -> bool {
    match toml::from_str::<toml::Table>(text) {
        Ok(t) => t.get("model").is_some_and(|m| m.is_array()) || t.contains_key("group"),
        // Let the manifest parser report the syntax error with its position.
        Err(_) => false,
    }
}

/// The error a single-model reader gives for a group manifest.
pub(super) fn refuse_many(text: &str, path: &Path) -> Result<()> {
    if !lists_many(text) {
        return Ok(());
    }
    Err(Error::input(format!(
        "{} is a group manifest ([[model]] tables or a [group] table), not a single model",
        path.display()
    ))
    .help("plan it with `planner plan` or `planner::manifest::load_group`; for one model, keep a single [model] table"))
}

impl Group {
    /// Parses group manifest text; `path` is used in messages and to resolve sources.
    pub fn parse(text: &str, path: &Path) -> Result<Group> {
        if !lists_many(text) {
            return Manifest::parse(text, path).map(Group::single);
        }
        let text: Arc<str> = Arc::from(text);
        let ctx = Ctx { path, text: &text };
        let raw: RawGroupManifest = toml::from_str(&text).map_err(|e| toml_error(e, &ctx))?;
        let shared = Shared::check(&ctx, raw.platform, raw.memory, raw.kernels)?;
        let mut models: Vec<Manifest> = Vec::new();
        let mut spans = Vec::new();
        for (k, m) in raw.model.into_iter().enumerate() {
            let name_span = m.get_ref().name.clone();
            let manifest = shared.with_model(&ctx, m, &format!("model[{k}].rules"))?;
            if models.iter().any(|x| x.name == manifest.name) {
                return Err(ctx.err(
                    &name_span,
                    format!("model {} is listed twice in the group", manifest.name),
                    "give each [[model]] its own name",
                ));
            }
            spans.push(name_span);
            models.push(manifest);
        }
        if models.is_empty() {
            return Err(Error::input("the group lists no model")
                .note(format!("in {}", path.display()))
                .help("add a [[model]] table with `name` and `source`"));
        }
        let (name, concurrent, set_spans) = match raw.group {
            None => (default_name(path), Vec::new(), Vec::new()),
            Some(g) => check_group(&ctx, g.into_inner(), &models, path)?,
        };
        check_names(&ctx, &models, &spans, &concurrent, &set_spans)?;
        Ok(Group {
            path: path.to_path_buf(),
            name,
            models,
            concurrent,
        })
    }
}

fn default_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "group".to_string());
    sanitize_name(&stem)
}

/// The `concurrent` sets as written, for their positions.
type SetSpans = Vec<Spanned<Vec<Spanned<String>>>>;

/// Refuses two models, or a model and a `concurrent` set, whose names make the same name in
/// the generated code ([`naming::group_clash`]): the same module (`A` and `a`, `_x` and
/// `x`, two names equal in their first 48 characters), header file or C prefix, or the same
/// method of the group handle (a model `a_and_b` and the set `[a, b]`, models `take` and
/// `take_model`). rustc would refuse the expansion with an error naming neither, or one
/// header file would overwrite the other; here the error names both and their lines.
fn check_names(
    ctx: &Ctx<'_>,
    models: &[Manifest],
    spans: &[Spanned<String>],
    sets: &[Vec<usize>],
    set_spans: &[Spanned<Vec<Spanned<String>>>],
) -> Result<()> {
    let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
    let Some(clash) = naming::group_clash(&names, sets) else {
        return Ok(());
    };
    let line = |span: core::ops::Range<usize>| {
        let start = span.start.min(ctx.text.len());
        ctx.text.as_bytes()[..start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    };
    let describe = |owner: NameOwner| match owner {
        NameOwner::Model(k) => format!(
            "model {} (model[{k}], line {})",
            names.get(k).copied().unwrap_or("?"),
            spans.get(k).map_or(0, |s| line(s.span()))
        ),
        NameOwner::Set(k) => {
            let members: Vec<&str> = sets
                .get(k)
                .into_iter()
                .flatten()
                .filter_map(|&i| names.get(i).copied())
                .collect();
            format!(
                "group.concurrent[{k}] [{}] (line {})",
                members.join(", "),
                set_spans.get(k).map_or(0, |s| line(s.span()))
            )
        }
        NameOwner::Fixed => "the group handle itself".to_string(),
    };
    let message = format!(
        "{} and {} both make the {} `{}` in the generated code",
        describe(clash.first),
        describe(clash.second),
        clash.what,
        clash.name
    );
    let rename = |owner: NameOwner| match owner {
        NameOwner::Model(k) => Some(format!(
            "rename model {}",
            names.get(k).copied().unwrap_or("?")
        )),
        NameOwner::Set(_) | NameOwner::Fixed => None,
    };
    let help = match (rename(clash.first), rename(clash.second)) {
        (Some(a), Some(b)) => format!(
            "{b} or {}; names that differ only in case, in a leading or trailing `_`, after their first 48 characters, or by a `_model` that the generator adds to keywords and to take, init, from_buffers and arena_ptrs make the same identifiers",
            a.trim_start_matches("rename ")
        ),
        (Some(a), None) | (None, Some(a)) => {
            format!("{a}: a concurrent set's method joins its models' methods with `_and_`")
        }
        (None, None) => "name each concurrent set once".to_string(),
    };
    let at = match clash.second {
        NameOwner::Model(k) => spans.get(k).map(|s| ctx.span(s.span())),
        NameOwner::Set(k) => set_spans.get(k).map(|s| ctx.span(s.span())),
        NameOwner::Fixed => None,
    };
    let e = Error::input(message).help(help);
    Err(match at {
        Some(at) => e.at(at),
        None => e,
    })
}

/// Checks `[group]`: its name, and that `concurrent` names listed models, each set at
/// least two, none twice, and no set twice (in any order).
fn check_group(
    ctx: &Ctx<'_>,
    g: RawGroup,
    models: &[Manifest],
    path: &Path,
) -> Result<(String, Vec<Vec<usize>>, SetSpans)> {
    let name = match &g.name {
        Some(n) => check_name(ctx, n)?,
        None => default_name(path),
    };
    let index: BTreeMap<&str, usize> = models
        .iter()
        .enumerate()
        .map(|(k, m)| (m.name.as_str(), k))
        .collect();
    let mut sets = Vec::new();
    for (s, set) in g.concurrent.iter().enumerate() {
        let mut ks: Vec<usize> = Vec::new();
        for n in set.get_ref() {
            let Some(&k) = index.get(n.get_ref().as_str()) else {
                let hint = did_you_mean(n.get_ref(), index.keys().copied())
                    .map(|s| format!("did you mean `{s}`? "))
                    .unwrap_or_default();
                let names: Vec<&str> = index.keys().copied().collect();
                return Err(ctx.err(
                    n,
                    format!(
                        "group.concurrent[{s}] names model {:?}, which the group does not list",
                        n.get_ref()
                    ),
                    format!("{hint}models: {}", names.join(", ")),
                ));
            };
            if ks.contains(&k) {
                return Err(ctx.err(
                    n,
                    format!("group.concurrent[{s}] names model {} twice", n.get_ref()),
                    "name each model once per set",
                ));
            }
            ks.push(k);
        }
        if ks.len() < 2 {
            return Err(ctx.err(
                set,
                format!(
                    "group.concurrent[{s}] names {} model(s); a set of models that may run at once needs at least two",
                    ks.len()
                ),
                "list two or more model names, such as [\"kws\", \"vww\"], or remove the set",
            ));
        }
        // A set listed again adds nothing, and would make its lending method twice (or a
        // second method for the same set): refused, naming both, rather than dropped.
        let mut sorted = ks.clone();
        sorted.sort_unstable();
        let same = sets.iter().position(|earlier: &Vec<usize>| {
            let mut e = earlier.clone();
            e.sort_unstable();
            e == sorted
        });
        if let Some(first) = same {
            let names: Vec<&str> = set.get_ref().iter().map(|n| n.get_ref().as_str()).collect();
            return Err(ctx.err(
                set,
                format!(
                    "group.concurrent[{s}] lists the same models as group.concurrent[{first}] ({})",
                    names.join(", ")
                ),
                format!("remove group.concurrent[{s}]; each set of models is listed once"),
            ));
        }
        sets.push(ks);
    }
    Ok((name, sets, g.concurrent))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::KernelSet;
    use crate::manifest::tests::{inline_model, says};

    /// A `[[model]]` running RELU over `len` i8 elements, then the lines `more`.
    fn relu_model(name: &str, len: u32, more: &str) -> String {
        format!("{}{more}", inline_model("[[model]]", name, "RELU", len))
    }

    /// The group `pair` of the models `a` (with a scratch rule) and `b`, run together.
    fn two() -> String {
        let a = relu_model(
            "a",
            16,
            "rules = [ { type = \"scratch\", attributes = { memory = \"SRAM\" } } ]\n",
        );
        let b = relu_model("b", 32, "");
        format!("[group]\nname = \"pair\"\nconcurrent = [[\"a\", \"b\"]]\n\n{a}\n{b}")
    }

    fn parse(text: &str) -> Result<Group> {
        Group::parse(text, Path::new("g.toml"))
    }

    #[test]
    fn two_models_with_own_rules() {
        let g = parse(&two()).unwrap();
        assert_eq!(g.name, "pair");
        assert_eq!(g.models.len(), 2);
        assert_eq!(g.concurrent, vec![vec![0, 1]]);
        assert!(g.may_run_together(0, 1));
        assert_eq!(g.models[0].rules.len(), 1);
        assert_eq!(
            g.models[0].rules[0].describe(),
            "model[0].rules[0] (type scratch)"
        );
        assert!(g.models[1].rules.is_empty());
    }

    /// One `[kernels]` table for the group: every model is planned for that set; a model
    /// table cannot choose its own.
    #[test]
    fn the_kernel_set_is_the_groups() {
        let g = parse(&format!("{}\n[kernels]\nset = \"optimized\"\n", two())).unwrap();
        let sets: Vec<KernelSet> = g.models.iter().map(|m| m.kernels).collect();
        assert_eq!(sets, [KernelSet::Optimized; 2]);
        let plain = parse(&two()).unwrap();
        assert!(plain.models.iter().all(|m| m.kernels == KernelSet::Reference));
        let own = two().replace("name = \"b\"", "name = \"b\"\nkernels = { set = \"optimized\" }");
        let e = parse(&own).unwrap_err();
        says(&e, "unknown field `kernels`");
    }

    #[test]
    fn single_model_reader_refuses_a_group() {
        let e = Manifest::parse(&two(), Path::new("g.toml")).unwrap_err();
        says(&e, "is a group manifest");
    }

    #[test]
    fn single_model_is_a_group_of_one() {
        let one = "[model]\nname = \"m\"\nsource = \"m.tflite\"\n";
        let g = parse(one).unwrap();
        assert_eq!((g.name.as_str(), g.models.len()), ("m", 1));
        assert!(g.concurrent.is_empty());
    }

    #[test]
    fn default_is_sequential_and_name_from_file() {
        let text = two().replace(
            "[group]\nname = \"pair\"\nconcurrent = [[\"a\", \"b\"]]\n",
            "",
        );
        let g = parse(&text).unwrap();
        assert_eq!(g.name, "g");
        assert!(!g.may_run_together(0, 1));
    }

    #[test]
    fn unknown_model_in_concurrent() {
        let e = parse(&two().replace("[\"a\", \"b\"]", "[\"a\", \"bb\"]")).unwrap_err();
        says(&e, "\"bb\"");
        assert!(e.help_text().unwrap().contains("did you mean `b`?"));
        assert_eq!(e.location().unwrap().1, 3);
        assert!(e.to_string().contains("g.toml:3:"), "{e}");
    }

    #[test]
    fn duplicate_model_and_short_set() {
        let e = parse(&two().replace("name = \"b\"", "name = \"a\"")).unwrap_err();
        says(&e, "model a is listed twice");
        assert_eq!(e.location().unwrap().1, 15);
        let e = parse(&two().replace("[\"a\", \"b\"]", "[\"a\"]")).unwrap_err();
        says(&e, "at least two");
        let e = parse(&two().replace("[\"a\", \"b\"]", "[\"a\", \"a\"]")).unwrap_err();
        says(&e, "twice");
    }

    #[test]
    fn model_rule_errors_name_the_model_table() {
        let e = parse(&two().replace("memory = \"SRAM\"", "memory = \"SRAN\"")).unwrap_err();
        says(&e, "model[0].rules[0]");
        assert_eq!(e.location().unwrap().1, 12);
    }
}
