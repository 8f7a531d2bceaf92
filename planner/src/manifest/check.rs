//! From the TOML's shapes ([`super::schema`]) to a checked [`Manifest`]: the platform, the
//! planner and its options, constraints, placement rules, slabs and the model's source. Every
//! error points at the key at fault (file, line, column), says the value seen and what would
//! fix it.

use std::collections::BTreeMap;
use std::path::Path;
use std::string::{String, ToString};
use std::vec::Vec;

use toml::Spanned;

use super::schema::{
    IdPattern, RawConstraint, RawKernels, RawMemory, RawMemoryDef, RawModel,
    RawPlatform, RawRule, RawSlab,
};
use super::{
    Aliasing, BudgetSpans, DEFAULT_MAX_ZERO_CONSTANTS, InlineModel, KernelSet, Manifest, Memory,
    ModelSource, Patches, Platform, Rule, RuleType, Schedule, SlabDef, sanitize_name,
};
use crate::error::{Error, Result, Span, did_you_mean};
use crate::pack::{OptionValue, PlannerKind};
use crate::plan::{ArenaRole, MemoryConstraint};
use crate::naming;

use super::ctx::Ctx;


/// What the models of one manifest share: `[platform]`, `[memory]` and `[kernels]`.
pub(crate) struct Shared {
    platform: Platform,
    planner: PlannerKind,
    constraints: Vec<MemoryConstraint>,
    rules: Vec<Rule>,
    slabs: Vec<SlabDef>,
    aliasing: Aliasing,
    schedule: Schedule,
    max_zero_constants: u64,
    patches: Patches,
    kernels: KernelSet,
    budget_spans: BudgetSpans,
}

impl Shared {
    /// Checks `[platform]`, `[memory]` and `[kernels]`.
    pub(super) fn check(
        ctx: &Ctx<'_>,
        platform: Option<Spanned<RawPlatform>>,
        memory: Option<RawMemory>,
        kernels: Option<RawKernels>,
    ) -> Result<Shared> {
        let (platform, size_spans) = check_platform(ctx, platform)?;
        let memory = memory.unwrap_or_default();
        let planner = check_planner(
            ctx,
            memory.planner.as_ref(),
            memory.planner_options.as_ref(),
        )?;
        let on = OnPlatform {
            ctx,
            platform: &platform,
        };
        let constraints = on.constraints(&memory.constraints)?;
        let budget_spans = BudgetSpans {
            max_size: key_spans(ctx, &memory.constraints, |c| (&c.name, &c.max_size)),
            size: size_spans,
        };
        let rules = on.rules(&memory.tensors, ("memory.tensors", 0))?;
        let slabs = on.slabs(&memory.slabs)?;
        let schedule = match &memory.schedule {
            None => Schedule::Fixed,
            Some(s) => match s.get_ref().as_str() {
                "fixed" => Schedule::Fixed,
                "memory" => Schedule::Memory,
                other => {
                    return Err(ctx.err(
                        s,
                        format!("memory.schedule is {other:?}"),
                        "use \"fixed\" (the model's order) or \"memory\" (an order that lowers the peak)",
                    ));
                }
            },
        };
        let mut in_place_ops = Vec::new();
        for op in &memory.in_place_ops {
            let name = op.get_ref().trim().to_ascii_uppercase();
            if crate::rt::op_kinds::in_place(&name) == crate::rt::op_kinds::InPlace::Never {
                return Err(ctx.err(
                    op,
                    format!("memory.in_place_ops names {:?}, which never runs in place", op.get_ref()),
                    format!(
                        "name kinds that run in place ({}), or set `in_place = true` for all of them",
                        crate::rt::op_kinds::OpKind::names(|k| k.in_place != crate::rt::op_kinds::InPlace::Never)
                    ),
                ));
            }
            if !in_place_ops.contains(&name) {
                in_place_ops.push(name);
            }
        }
        let patches = super::patches::check(ctx, &memory)?;
        let aliasing = Aliasing {
            reshapes: memory.alias_reshapes,
            in_place_ops,
            in_place: memory.in_place,
            row_overlap: memory.row_overlap,
        };
        Ok(Shared {
            platform,
            planner,
            constraints,
            rules,
            slabs,
            aliasing,
            schedule,
            max_zero_constants: memory
                .max_zero_constants
                .map_or(DEFAULT_MAX_ZERO_CONSTANTS, |s| s.get_ref().0),
            patches,
            kernels: check_kernels(ctx, kernels.unwrap_or_default())?,
            budget_spans,
        })
    }

    /// One model's manifest: the shared parts, its source, and its own rules (`rules_table`
    /// names them in messages) after the shared ones.
    pub(super) fn with_model(
        &self,
        ctx: &Ctx<'_>,
        model: Spanned<RawModel>,
        rules_table: &str,
    ) -> Result<Manifest> {
        let path = ctx.path;
        let text = ctx.text;
        let base = path.parent().unwrap_or(Path::new(""));
        let model_span = model.span();
        let model = model.into_inner();
        let name = check_name(ctx, &model.name)?;
        let mut rules = self.rules.clone();
        if let Some(own) = &model.rules {
            let on = OnPlatform {
                ctx,
                platform: &self.platform,
            };
            let more = on.rules(own, (rules_table, rules.len()))?;
            rules.extend(more);
        }
        let source = match one_of(
            ctx,
            model_span,
            &model.source,
            &model.tensors,
            [
                "model.source and model.tensors are both given",
                "keep `source` for a model file, or `tensors` and `ops` for an inline graph",
            ],
            [
                "model has neither `source` nor `tensors`",
                "add `source = \"model.tflite\"`, or describe the graph with `tensors` and `ops`",
            ],
        )? {
            OneOf::First(src) => {
                if model.ops.is_some() || model.inputs.is_some() || model.outputs.is_some() {
                    return Err(ctx.err(
                        src,
                        "model.source and an inline graph (ops, inputs, outputs) are both given",
                        "keep `source` for a model file, or describe the graph inline without it",
                    ));
                }
                ModelSource::File(base.join(src.get_ref()))
            }
            OneOf::Second(_) => ModelSource::Inline(std::boxed::Box::new(InlineModel {
                path: path.to_path_buf(),
                text: text.clone(),
                tensors: model.tensors.unwrap_or_default(),
                ops: model.ops.unwrap_or_default(),
                inputs: model.inputs,
                outputs: model.outputs,
            })),
        };
        Ok(Manifest {
            path: path.to_path_buf(),
            name,
            source,
            platform: self.platform.clone(),
            planner: self.planner.clone(),
            constraints: self.constraints.clone(),
            rules,
            slabs: self.slabs.clone(),
            aliasing: self.aliasing.clone(),
            schedule: self.schedule,
            max_zero_constants: self.max_zero_constants,
            patches: self.patches.clone(),
            kernels: self.kernels,
            budget_spans: self.budget_spans.clone(),
        })
    }
}

pub(super) fn check_name(ctx: &Ctx<'_>, name: &Spanned<String>) -> Result<String> {
    let n = name.get_ref();
    let ok = !n.is_empty()
        && n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err(ctx.err(
            name,
            format!("model name {n:?} is not an identifier"),
            format!(
                "use letters, digits and `_`, starting with a letter, such as {:?}",
                sanitize_name(n)
            ),
        ));
    }
    Ok(n.clone())
}

/// The platform, and where each memory's size is written (the `preset` line for a preset).
fn check_platform(
    ctx: &Ctx<'_>,
    raw: Option<Spanned<RawPlatform>>,
) -> Result<(Platform, BTreeMap<String, Span>)> {
    let Some(raw) = raw else {
        let generic = Platform::generic();
        return Ok((generic, BTreeMap::new()));
    };
    let span = raw.span();
    let raw = raw.into_inner();
    let given = one_of(
        ctx,
        span.clone(),
        &raw.preset,
        &raw.memories,
        [
            "platform has both `preset` and `memories`",
            "keep one: a preset by name, or your own list of memories",
        ],
        [
            "platform has neither `preset` nor `memories`",
            "add `preset = \"generic\"` (or another preset), or list `memories`",
        ],
    )?;
    let size_spans = match given {
        OneOf::First(p) => Platform::preset(p.get_ref())
            .map(|pl| pl.memories)
            .unwrap_or_default()
            .into_iter()
            .map(|m| (m.name, ctx.span(p.span())))
            .collect(),
        OneOf::Second(mems) => key_spans(ctx, mems, |m| (&m.name, &m.size)),
    };
    let mut platform = match given {
        OneOf::First(p) => Platform::preset(p.get_ref()).ok_or_else(|| {
            let hint = did_you_mean(p.get_ref(), Platform::PRESETS.iter().copied())
                .map(|s| format!("did you mean `{s}`? "))
                .unwrap_or_default();
            ctx.err(
                p,
                format!("unknown platform preset {:?}", p.get_ref()),
                format!("{hint}presets: {}", Platform::PRESETS.join(", ")),
            )
        })?,
        OneOf::Second(mems) => {
            let mut memories: Vec<Memory> = Vec::new();
            for m in mems {
                let m = m.get_ref();
                let name = m.name.get_ref();
                let help = "use letters, digits and `_`, such as \"DTCM\" or \"SRAM1\"";
                let taken = memories.iter().map(|x| &x.name);
                fresh_name(ctx, &m.name, taken, "memory name", help, "memory")?;
                // Generated statics, sections and files name a memory in lowercase words.
                let word = |n: &str| naming::arena_field(ArenaRole::Scratch, n);
                if let Some(x) = memories.iter().find(|x| word(&x.name) == word(name)) {
                    return Err(ctx.err(
                        &m.name,
                        format!(
                            "memories {} and {name} get the same name in generated code ({})",
                            x.name,
                            word(name)
                        ),
                        "give the memories names that differ in more than case and `_`",
                    ));
                }
                check_address_range(ctx, m)?;
                memories.push(Memory {
                    name: name.clone(),
                    size: m.size.as_ref().map(|s| s.get_ref().0),
                    writable: m.writable,
                    readable_in_place: m.readable_in_place,
                    origin: m.origin.as_ref().map(|s| s.get_ref().0),
                });
            }
            if memories.is_empty() {
                return Err(Error::input("platform.memories is empty")
                    .at(ctx.span(span))
                    .help("list at least one writable memory, or use `preset = \"generic\"`"));
            }
            Platform {
                name: "custom".to_string(),
                memories,
                min_alignment: 16,
            }
        }
    };
    if let Some(a) = &raw.min_alignment {
        platform.min_alignment = ctx.alignment(a, "platform.min_alignment")?;
    }
    if !platform.memories.iter().any(|m| m.writable) {
        return Err(Error::input("the platform has no writable memory")
            .at(ctx.span(span))
            .help("mark at least one memory `writable = true`; activations need one"));
    }
    Ok((platform, size_spans))
}

/// Where each of `entries` sets its optional key, by the entry's name: `key` gives an
/// entry's name and the key; entries without the key are left out.
fn key_spans<T, V>(
    ctx: &Ctx<'_>,
    entries: &[Spanned<T>],
    key: impl Fn(&T) -> (&Spanned<String>, &Option<Spanned<V>>),
) -> BTreeMap<String, Span> {
    entries
        .iter()
        .filter_map(|e| {
            let (name, value) = key(e.get_ref());
            Some((name.get_ref().clone(), ctx.span(value.as_ref()?.span())))
        })
        .collect()
}

/// Which of two keys that exclude each other a table gives.
#[derive(Clone, Copy)]
enum OneOf<A, B> {
    First(A),
    Second(B),
}

/// The one of the keys `first` and `second` that the table at `span` gives. Both given:
/// the error `both` (message, help) at `first`; neither: the error `neither` at the table.
fn one_of<'a, A, B>(
    ctx: &Ctx<'_>,
    span: std::ops::Range<usize>,
    first: &'a Option<Spanned<A>>,
    second: &'a Option<B>,
    both: [&str; 2],
    neither: [&str; 2],
) -> Result<OneOf<&'a Spanned<A>, &'a B>> {
    match (first, second) {
        (Some(a), None) => Ok(OneOf::First(a)),
        (None, Some(b)) => Ok(OneOf::Second(b)),
        (Some(a), Some(_)) => Err(ctx.err(a, both[0], both[1])),
        (None, None) => Err(Error::input(neither[0])
            .at(ctx.span(span))
            .help(neither[1])),
    }
}

/// A memory with an `origin` must lie in the 32-bit address space of the targets.
fn check_address_range(ctx: &Ctx<'_>, m: &RawMemoryDef) -> Result<()> {
    const SPACE: u64 = 1 << 32;
    let Some(origin) = &m.origin else {
        return Ok(());
    };
    let start = origin.get_ref().0;
    let size = m.size.as_ref().map_or(0, |s| s.get_ref().0);
    if start.checked_add(size).is_none_or(|end| end > SPACE) || start >= SPACE {
        return Err(ctx.err(
            origin,
            format!(
                "memory {} at origin {start:#x} with {size} bytes ends past the 32-bit address space (0x1_0000_0000)",
                m.name.get_ref()
            ),
            format!(
                "lower the origin or the size so origin + size is at most {SPACE:#x}"
            ),
        ));
    }
    Ok(())
}

/// A name given in a list (`label`, for messages: `memory name`) that must be an
/// identifier and differ from the `taken` ones (of other `kind`s: `memory`, `slab`).
fn fresh_name<'a>(
    ctx: &Ctx<'_>,
    name: &Spanned<String>,
    mut taken: impl Iterator<Item = &'a String>,
    label: &str,
    help: &str,
    kind: &str,
) -> Result<()> {
    let n = name.get_ref();
    if !is_memory_name(n) {
        return Err(ctx.err(name, format!("{label} {n:?} is not an identifier"), help));
    }
    if taken.any(|x| x == n) {
        return Err(ctx.err(
            name,
            format!("{kind} {n} is defined twice"),
            format!("give each {kind} its own name"),
        ));
    }
    Ok(())
}

fn is_memory_name(s: &str) -> bool {
    !s.is_empty()
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The memory of `platform` that `name` (the key `what`) names, or the error naming the
/// memories the platform has.
fn known_memory<'p>(
    ctx: &Ctx<'_>,
    platform: &'p Platform,
    name: &Spanned<String>,
    what: &str,
) -> Result<&'p Memory> {
    if let Some(memory) = platform.memory(name.get_ref()) {
        return Ok(memory);
    }
    let names: Vec<&str> = platform.memories.iter().map(|m| m.name.as_str()).collect();
    let hint = did_you_mean(name.get_ref(), names.iter().copied())
        .map(|s| format!("did you mean `{s}`? "))
        .unwrap_or_default();
    Err(ctx.err(
        name,
        format!(
            "{what} names memory {:?}, which platform {} does not have",
            name.get_ref(),
            platform.name
        ),
        format!("{hint}memories: {}", names.join(", ")),
    ))
}

/// The `[kernels]` table: the set named by `set` (default: the reference set).
fn check_kernels(ctx: &Ctx<'_>, raw: RawKernels) -> Result<KernelSet> {
    let Some(set) = raw.set else {
        return Ok(KernelSet::default());
    };
    KernelSet::from_name(set.get_ref()).ok_or_else(|| {
        let names = KernelSet::ALL.map(KernelSet::name);
        let hint = did_you_mean(set.get_ref(), names)
            .map(|s| format!("did you mean `{s}`? "))
            .unwrap_or_default();
        ctx.err(
            &set,
            format!("kernels.set is {:?}", set.get_ref()),
            format!(
                "{hint}use \"reference\" (planner_kernels::Reference: nothing prepared) or \"optimized\" (prepared constants and planned kernel scratch)"
            ),
        )
    })
}

fn check_planner(
    ctx: &Ctx<'_>,
    planner: Option<&Spanned<String>>,
    options: Option<&Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
) -> Result<PlannerKind> {
    let name = planner.map_or(PlannerKind::default().name(), |p| p.get_ref().as_str());
    let mut opts = BTreeMap::new();
    if let Some(o) = options {
        for (k, v) in o.get_ref() {
            let value = match v.get_ref() {
                toml::Value::Integer(i) => OptionValue::Int(*i),
                toml::Value::String(s) => OptionValue::Str(s.clone()),
                toml::Value::Boolean(b) => OptionValue::Bool(*b),
                toml::Value::Float(f) => OptionValue::Float(*f),
                other => {
                    return Err(ctx.err(
                        v,
                        format!("planner option `{k}` is a {}", other.type_str()),
                        "give a number, a string or a boolean",
                    ));
                }
            };
            opts.insert(k.clone(), value);
        }
    }
    PlannerKind::from_name(name, &opts).map_err(|e| {
        let range = match (&e.key, options, planner) {
            (Some(k), Some(o), _) => o.get_ref().get(k).map_or(o.span(), |v| v.span()),
            (_, _, Some(p)) => p.span(),
            _ => 0..0,
        };
        let (message, help) = match e.message.split_once("; ") {
            Some((m, h)) => (m.to_string(), h.to_string()),
            None => (
                e.message.clone(),
                "see the planners and their options in docs/manifest.md".to_string(),
            ),
        };
        Error::input(message).at(ctx.span(range)).help(help)
    })
}

/// Checks the entries of the array `table` (`memory.slabs`, ..) in order: `check` gets an
/// entry's index, the entry, its name in messages (`table[i]`) and the entries checked
/// before it, and returns the checked entry or the first error.
fn check_each<R, T>(
    raw: &[Spanned<R>],
    table: &str,
    mut check: impl FnMut(usize, &Spanned<R>, &str, &[T]) -> Result<T>,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(raw.len());
    for (i, r) in raw.iter().enumerate() {
        let checked = check(i, r, &format!("{table}[{i}]"), &out)?;
        out.push(checked);
    }
    Ok(out)
}

/// The checks of the `[memory]` arrays (and a model's `rules`) that name the platform's
/// memories.
#[derive(Clone, Copy)]
struct OnPlatform<'a> {
    ctx: &'a Ctx<'a>,
    platform: &'a Platform,
}

impl OnPlatform<'_> {
    fn constraints(self, raw: &[Spanned<RawConstraint>]) -> Result<Vec<MemoryConstraint>> {
        let OnPlatform { ctx, platform } = self;
        check_each(raw, "memory.constraints", |_, c, what, out: &[MemoryConstraint]| {
            let c = c.get_ref();
            let memory = known_memory(ctx, platform, &c.name, what)?;
            if out.iter().any(|x| &x.name == c.name.get_ref()) {
                return Err(ctx.err(
                    &c.name,
                    format!("memory {} has two constraints", c.name.get_ref()),
                    "merge them into one entry",
                ));
            }
            let max_size = match &c.max_size {
                Some(s) => {
                    let v = s.get_ref().0;
                    if let Some(size) = memory.size
                        && v > size
                    {
                        return Err(ctx.err(
                            s,
                            format!(
                                "{what}.max_size is {v} bytes, but memory {} has only {size}",
                                memory.name
                            ),
                            format!("lower max_size to at most {size}, or fix the memory's size"),
                        ));
                    }
                    Some(v)
                }
                None => None,
            };
            let arena_alignment = ctx.optional_alignment(&c.arena_alignment, &format!("{what}.arena_alignment"))?;
            Ok(MemoryConstraint {
                name: memory.name.clone(),
                max_size,
                arena_alignment,
                app_bound: c.app_bound,
            })
        })
    }

    /// Checks the rules of `table` (`memory.tensors`, or a model's `rules`); their indices
    /// start at `first`.
    fn rules(self, raw: &[Spanned<RawRule>], (table, first): (&str, usize)) -> Result<Vec<Rule>> {
        let OnPlatform { ctx, platform } = self;
        check_each(raw, table, |i, r, what, _| {
            let span = r.span();
            let r = r.get_ref();
            let rule_type = match &r.rule_type {
                None => RuleType::Any,
                Some(t) => match t.get_ref().as_str() {
                    "*" => RuleType::Any,
                    "constant" => RuleType::Role(ArenaRole::Constant),
                    "persistent" => RuleType::Role(ArenaRole::Persistent),
                    "scratch" => RuleType::Role(ArenaRole::Scratch),
                    other => {
                        let hint = did_you_mean(other, ["constant", "persistent", "scratch"])
                            .map(|s| format!("did you mean `{s}`? "))
                            .unwrap_or_default();
                        return Err(ctx.err(
                            t,
                            format!("{what}.type is {other:?}"),
                            format!("{hint}use \"constant\", \"persistent\", \"scratch\" or \"*\""),
                        ));
                    }
                },
            };
            let ids = r.id.as_ref().map(|id| match id.get_ref() {
                IdPattern::One(s) => vec![s.clone()],
                IdPattern::Many(v) => v.clone(),
            });
            if let (Some(ids), Some(id)) = (&ids, &r.id)
                && (ids.is_empty() || ids.iter().any(|s| s.is_empty()))
            {
                return Err(ctx.err(
                    id,
                    format!("{what}.id is empty"),
                    "name a tensor id or name, a list of them, or a glob such as \"conv_*\"",
                ));
            }
            let (memory, dest) = match &r.attributes {
                None => (None, None),
                Some(a) => {
                    let a = a.get_ref();
                    (a.memory.as_ref(), a.constant_destination_memory.as_ref())
                }
            };
            if memory.is_none() && dest.is_none() {
                return Err(Error::input(format!("{what} has no `attributes`"))
                    .at(ctx.span(span.clone()))
                    .help("add `attributes = { memory = \"...\" }` (and for constants, optionally `constant_destination_memory`)"));
            }
            if let Some(m) = memory {
                let mm = known_memory(ctx, platform, m, &format!("{what}.attributes.memory"))?;
                if let RuleType::Role(role @ (ArenaRole::Scratch | ArenaRole::Persistent)) = rule_type
                    && !mm.writable
                {
                    return Err(ctx.err(
                        m,
                        format!(
                            "{what} pins {} tensors to {}, which is read-only",
                            role.name(),
                            mm.name
                        ),
                        "pin them to a writable memory; only constants can live in read-only memory",
                    ));
                }
            }
            if let Some(d) = dest {
                let key = format!("{what}.attributes.constant_destination_memory");
                let dm = known_memory(ctx, platform, d, &key)?;
                if !dm.writable {
                    return Err(ctx.err(
                        d,
                        format!("{what}.attributes.constant_destination_memory is {}, which is read-only", dm.name),
                        "stage constants into a writable memory (e.g. a TCM), or drop constant_destination_memory to read them in place",
                    ));
                }
                if let RuleType::Role(role @ (ArenaRole::Scratch | ArenaRole::Persistent)) = rule_type {
                    return Err(ctx.err(
                        d,
                        format!("{what} sets constant_destination_memory on {} tensors", role.name()),
                        "constant_destination_memory applies to constants only; use `memory` for other roles",
                    ));
                }
            }
            Ok(Rule {
                index: first + i,
                rule_type,
                ids,
                memory: memory.map(|m| m.get_ref().clone()),
                constant_destination_memory: dest.map(|d| d.get_ref().clone()),
                span: Some(ctx.span(span)),
                label: (table != "memory.tensors").then(|| what.to_string()),
            })
        })
    }

    fn slabs(self, raw: &[Spanned<RawSlab>]) -> Result<Vec<SlabDef>> {
        let OnPlatform { ctx, platform } = self;
        check_each(raw, "memory.slabs", |_, s, what, out: &[SlabDef]| {
            let s = s.get_ref();
            let name = s.name.get_ref();
            let help = "use letters, digits and `_`, starting with a letter, such as \"preprocess\"";
            let taken = out.iter().map(|x| &x.name);
            fresh_name(ctx, &s.name, taken, &format!("{what}.name"), help, "slab")?;
            let memory = known_memory(ctx, platform, &s.memory, &format!("{what}.memory"))?;
            if !memory.writable {
                return Err(ctx.err(
                    &s.memory,
                    format!(
                        "{what} puts slab {name} in {}, which is read-only",
                        memory.name
                    ),
                    "a slab is written at run time: put it in a writable memory",
                ));
            }
            let role = match s.role.as_ref().map(|r| r.get_ref().as_str()) {
                None | Some("persistent") => ArenaRole::Persistent,
                Some("scratch") => ArenaRole::Scratch,
                Some(other) => {
                    return Err(ctx.err(
                        s.role.as_ref().unwrap_or(&s.name),
                        format!("{what}.role is {other:?}"),
                        "use \"persistent\" (its own bytes) or \"scratch\" (shares the scratch arena between runs)",
                    ));
                }
            };
            if s.size.get_ref().0 == 0 {
                return Err(ctx.err(
                    &s.size,
                    format!("{what}.size is 0"),
                    "give the slab's size in bytes, such as \"4K\"",
                ));
            }
            let alignment = ctx.optional_alignment(&s.alignment, &format!("{what}.alignment"))?;
            Ok(SlabDef {
                name: name.clone(),
                size: s.size.get_ref().0,
                memory: memory.name.clone(),
                role,
                alignment,
            })
        })
    }
}
