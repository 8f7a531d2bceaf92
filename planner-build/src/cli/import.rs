//! `planner import`: a starter manifest for a `.tflite` model.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use planner::Error;
use planner::manifest::Manifest;

use super::input::directory_hint;
use super::output::print;

/// `planner import`: the manifest printed, or written to `output`.
pub(super) fn command(model: &Path, output: Option<&Path>) -> Result<ExitCode, Error> {
    if let Some(out) = output {
        super::output::output_file(out, "manifest")?;
    }
    let text = import(model, output)?;
    match output {
        Some(out) => std::fs::write(out, text).map_err(|e| Error::file(out, "write", e))?,
        None => print(&text),
    }
    Ok(ExitCode::SUCCESS)
}

fn import(model: &Path, output: Option<&Path>) -> Result<String, Error> {
    if model.is_dir() {
        return Err(directory_hint(model));
    }
    let m = Manifest::for_model_file(model);
    let graph = planner::import::load(&m)?;
    let source = manifest_source(model, output)?;
    let constants = graph
        .tensors
        .iter()
        .filter(|t| t.kind == planner::graph::TensorKind::Constant)
        .count();
    let variables = graph
        .tensors
        .iter()
        .filter(|t| t.kind == planner::graph::TensorKind::Variable)
        .count();
    let mut s = String::new();
    s.push_str(&format!(
        "# Starter manifest for {} ({} ops, {} tensors: {constants} constant, {variables} variable).\n",
        comment_text(&model.display().to_string()),
        graph.ops.len(),
        graph.tensors.len()
    ));
    s.push_str("# It plans as it is; uncomment and edit the lines below for your board.\n\n");
    s.push_str("[model]\n");
    s.push_str(&format!("name = \"{}\"\n", m.name));
    s.push_str(&format!(
        "source = {}          # relative to this manifest's folder\n\n",
        toml_string(&source)
    ));
    s.push_str("[platform]\n");
    let boards: Vec<&str> = planner::manifest::Platform::PRESETS
        .iter()
        .copied()
        .filter(|p| *p != "generic")
        .collect();
    s.push_str(&format!(
        "preset = \"generic\"    # or: {}; or list `memories`\n",
        boards.join(", ")
    ));
    s.push_str("# min_alignment = 16\n\n");
    s.push_str("[memory]\n");
    s.push_str("planner = \"auto\"   # the default; or greedy, greedy_by_size, best_of_greedy, hill_climb, optimal\n");
    s.push_str("# constraints = [                 # bank preference order for scratch\n");
    s.push_str("#   { name = \"DTCM\", max_size = \"256K\", arena_alignment = 32 },\n");
    s.push_str("#   { name = \"SRAM\" },\n");
    s.push_str("# ]\n");
    s.push_str("# tensors = [                     # placement rules\n");
    s.push_str("#   { type = \"constant\", attributes = { memory = \"FLASH\" } },\n");
    if let Some(t) = graph
        .tensors
        .iter()
        .filter(|t| t.kind == planner::graph::TensorKind::Constant)
        .max_by_key(|t| (t.size, std::cmp::Reverse(t.id.clone())))
    {
        s.push_str(&format!(
            "#   {{ type = \"constant\", id = {}, attributes = {{ memory = \"FLASH\", constant_destination_memory = \"DTCM\" }} }},  # {} ({} bytes)\n",
            toml_string(&t.id),
            comment_text(&t.name),
            t.size
        ));
    }
    s.push_str("# ]\n");
    Ok(s)
}

/// Text for a TOML comment: control characters (a newline would end the comment and make
/// the rest of the name a line of TOML) written as `\u{..}` escapes.
fn comment_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                format!("\\u{{{:04X}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The `source` of a manifest for `model`: relative to the folder of `output`, the file
/// the manifest is written to; the model's file name when printed (saved beside it).
fn manifest_source(model: &Path, output: Option<&Path>) -> Result<String, Error> {
    let name = || {
        model
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let Some(out) = output else {
        return Ok(name());
    };
    let abs = |p: &Path| -> Result<PathBuf, Error> {
        std::path::absolute(p).map_err(|e| Error::file(p, "resolve", e))
    };
    let model_abs = abs(model)?;
    let out_dir = abs(out)?
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    Ok(relative_path(&model_abs, &out_dir)
        .to_string_lossy()
        .replace('\\', "/"))
}

/// `target` relative to the folder `base` (both absolute): `..` up to their common
/// ancestor, then down.
fn relative_path(target: &Path, base: &Path) -> PathBuf {
    use std::path::Component;
    fn clean(p: &Path) -> Vec<Component<'_>> {
        let mut out: Vec<Component<'_>> = Vec::new();
        for c in p.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                    out.pop();
                }
                c => out.push(c),
            }
        }
        out
    }
    let (t, b) = (clean(target), clean(base));
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c.as_os_str());
    }
    out
}

fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
