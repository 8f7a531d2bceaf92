//! `memory.patches`, `memory.max_recompute`, `memory.patch_input` and
//! `memory.patches_required`: whether the first stage of the model runs patch by patch
//! ([`crate::patch`]), how its input arrives, and whether planning without patches is an
//! error.

use std::string::{String, ToString};

use toml::Spanned;

use super::ctx::Ctx;
use super::schema::RawMemory;
use crate::error::{Error, Result, Span, did_you_mean};
use crate::patch_plan::PatchInput;

/// `memory.patches`: whether and how the first stage runs patch by patch.
#[derive(Debug, Clone)]
pub struct Patches {
    /// Off, `"auto"`, or a given split and grid.
    pub mode: PatchMode,
    /// How the model input reaches the stage (`memory.patch_input`, default resident).
    pub input: crate::patch_plan::PatchInput,
    /// `memory.max_recompute` when the manifest sets it.
    pub max_recompute: Option<f64>,
    /// `memory.patches_required = true`: `"auto"` finding no patch plan is an error, not a
    /// plan without patches and a warning.
    pub required: bool,
    /// Where `memory.patches` is written, for errors found while planning.
    pub(crate) span: Option<Span>,
}

impl Default for Patches {
    fn default() -> Patches {
        Patches {
            mode: PatchMode::Off,
            input: crate::patch_plan::PatchInput::Resident,
            max_recompute: None,
            required: false,
            span: None,
        }
    }
}

impl Patches {
    /// An error about the patch settings, at `memory.patches` in the manifest when it is
    /// there.
    pub(crate) fn error(&self, message: String, help: &str) -> Error {
        match &self.span {
            Some(s) => Error::input(message).at(s.clone()).help(help),
            None => Error::input(message).help(help),
        }
    }
}

/// Default of `memory.max_recompute`: at most 20 % more multiply-accumulates.
pub const DEFAULT_MAX_RECOMPUTE: f64 = 0.2;

/// How to write `memory.patches`.
const HELP: &str = "write patches = \"auto\", or patches = { split = \"<op index or output tensor name>\", grid = [rows, columns] }";

/// Checks `memory.patches`, `memory.max_recompute` and `memory.patch_input`.
pub(super) fn check(ctx: &Ctx<'_>, memory: &RawMemory) -> Result<Patches> {
    let input_of = |s: &Spanned<String>, key: &str| -> Result<PatchInput> {
        match s.get_ref().as_str() {
            "resident" => Ok(PatchInput::Resident),
            "streamed" => Ok(PatchInput::Streamed),
            other => Err(ctx.err(
                s,
                format!("{key} is {other:?}"),
                "use \"resident\" (the input whole in RAM) or \"streamed\" (a callback fills each patch's input region)",
            )),
        }
    };
    let mut input = match &memory.patch_input {
        Some(s) => input_of(s, "memory.patch_input")?,
        None => PatchInput::Resident,
    };
    let max_recompute = match &memory.max_recompute {
        None => None,
        Some(v) => {
            let f = match v.get_ref() {
                toml::Value::Float(f) => Some(*f),
                toml::Value::Integer(i) => Some(*i as f64),
                _ => None,
            };
            match f {
                Some(f) if f.is_finite() && f >= 0.0 => Some(f),
                _ => {
                    return Err(ctx.err(
                        v,
                        format!("memory.max_recompute is {}, not a fraction of 0 or more", v.get_ref()),
                        "write the most extra multiply-accumulates patches may cost as a fraction, such as 0.2 for 20 %",
                    ));
                }
            }
        }
    };
    let Some(p) = &memory.patches else {
        if let Some(v) = &memory.max_recompute {
            return Err(ctx.err(
                v,
                "memory.max_recompute is set but memory.patches is not",
                "add patches = \"auto\", or remove max_recompute",
            ));
        }
        if let Some(v) = &memory.patch_input {
            return Err(ctx.err(
                v,
                "memory.patch_input is set but memory.patches is not",
                "add patches = \"auto\", or remove patch_input",
            ));
        }
        if let Some(v) = &memory.patches_required {
            return Err(ctx.err(
                v,
                "memory.patches_required is set but memory.patches is not",
                "add patches = \"auto\", or remove patches_required",
            ));
        }
        return Ok(Patches::default());
    };
    let mode = match p.get_ref() {
        toml::Value::String(s) if s == "auto" => PatchMode::Auto {
            max_recompute: max_recompute.unwrap_or(DEFAULT_MAX_RECOMPUTE),
        },
        toml::Value::String(s) if s == "off" => PatchMode::Off,
        toml::Value::Table(t) => fixed(ctx, p, t, &input_of, &mut input)?,
        other => {
            return Err(ctx.err(
                p,
                format!("memory.patches is {other}"),
                format!("{HELP}, or leave it out for no patches"),
            ));
        }
    };
    let required = match &memory.patches_required {
        Some(r) if *r.get_ref() && mode == PatchMode::Off => {
            return Err(ctx.err(
                r,
                "memory.patches_required = true, but memory.patches is \"off\"",
                "write patches = \"auto\" (or a split and grid) to require patches, or remove patches_required",
            ));
        }
        Some(r) => *r.get_ref(),
        None => false,
    };
    Ok(Patches {
        mode,
        input,
        max_recompute,
        required,
        span: Some(ctx.span(p.span())),
    })
}

/// `patches = { split = ..., grid = [rows, columns], input = ... }`: a given split and grid;
/// `input` here overrides `memory.patch_input`.
fn fixed(
    ctx: &Ctx<'_>,
    p: &Spanned<toml::Value>,
    t: &toml::Table,
    input_of: &dyn Fn(&Spanned<String>, &str) -> Result<PatchInput>,
    input: &mut PatchInput,
) -> Result<PatchMode> {
    for key in t.keys() {
        if !["split", "grid", "input"].contains(&key.as_str()) {
            let help = match did_you_mean(key, ["split", "grid", "input"]) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "the keys of memory.patches are split, grid and input".to_string(),
            };
            return Err(ctx.err(
                p,
                format!("memory.patches has an unknown key `{key}`"),
                help,
            ));
        }
    }
    let split = match t.get("split") {
        Some(toml::Value::Integer(i)) if *i >= 0 && *i <= u32::MAX as i64 => {
            SplitRef::Index(*i as u32)
        }
        Some(toml::Value::String(s)) if !s.is_empty() => match s.parse::<u32>() {
            Ok(i) => SplitRef::Index(i),
            Err(_) => SplitRef::Name(s.clone()),
        },
        Some(other) => {
            return Err(ctx.err(
                p,
                format!("memory.patches.split is {other}, not an op index or name"),
                "name the split op by its index in the model (0, 1, ...) or by its output tensor's name",
            ));
        }
        None => {
            return Err(ctx.err(p, "memory.patches has no `split`", HELP));
        }
    };
    let grid = match t.get("grid") {
        Some(toml::Value::Array(a)) if a.len() == 2 => {
            let side = |v: &toml::Value| match v {
                toml::Value::Integer(i) if (1..=1024).contains(i) => Some(*i as u32),
                _ => None,
            };
            match (side(&a[0]), side(&a[1])) {
                (Some(r), Some(c)) => [r, c],
                _ => {
                    return Err(ctx.err(
                        p,
                        format!(
                            "memory.patches.grid is {}, whose sides are not whole numbers from 1 to 1024",
                            toml::Value::Array(a.clone())
                        ),
                        "write grid = [rows, columns], such as [4, 4]",
                    ));
                }
            }
        }
        Some(other) => {
            return Err(ctx.err(
                p,
                format!("memory.patches.grid is {other}, not [rows, columns]"),
                "write grid = [rows, columns], such as [4, 4]",
            ));
        }
        None => return Err(ctx.err(p, "memory.patches has no `grid`", HELP)),
    };
    if let Some(v) = t.get("input") {
        let s = match v {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let spanned = Spanned::new(p.span(), s);
        *input = input_of(&spanned, "memory.patches.input")?;
    }
    Ok(PatchMode::Fixed { split, grid })
}

/// What the manifest asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum PatchMode {
    /// No patches (the default: a user's kernel set must honour regions).
    Off,
    /// The lowest peak within a MAC-overhead budget (a fraction).
    Auto {
        /// Most extra MACs, a fraction of the per-layer MACs.
        max_recompute: f64,
    },
    /// A given split op and grid.
    Fixed {
        /// The split op.
        split: SplitRef,
        /// `[rows, columns]`.
        grid: [u32; 2],
    },
}

/// How the manifest names the split op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitRef {
    /// Index in the model's own op order.
    Index(u32),
    /// The name (or id) of the op's output tensor.
    Name(String),
}
