//! Finds the plan file, reads it and checks what code generation relies on (indices in
//! range, numbers representable). The layout rules themselves (overlaps, alignment,
//! budgets, blob lengths) are left to the generated `const` check, so that rustc is the
//! judge and a hand-edited plan fails there with the model's and tensors' names.

use std::path::{Path, PathBuf};

use planner_planfile::{
    AnyPlan, ArenaEntry, DType, GroupPlanFile, OpEntry, PlanFile, naming, read,
};
use syn::LitStr;

use planner_planfile::PLAN_DIR_VAR;

/// A plan file ready for code generation.
pub(crate) struct Loaded {
    /// The plan.
    pub(crate) file: PlanFile,
    /// Its absolute path, for `include_bytes!`.
    pub(crate) path: PathBuf,
    /// Absolute path of each arena's blob file (`None` for arenas without a blob).
    pub(crate) blobs: Vec<Option<PathBuf>>,
    /// Elements each tensor's view has.
    pub(crate) elements: Vec<u64>,
    /// For each tensor, the tensor whose bytes it is (itself unless an alias).
    pub(crate) roots: Vec<usize>,
    /// For each tensor, how the patch stage views it (`None` outside a patch stage).
    pub(crate) stage: Vec<Option<StageView>>,
}

/// How the ops of a patch stage view one of its tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StageView {
    /// Index of its entry in `PatchPlan::tensors`.
    pub(crate) entry: usize,
    /// True when viewed whole (the split tensor, a resident input); false when dense (its
    /// slot holds one region at a time).
    pub(crate) whole: bool,
    /// True for the split tensor.
    pub(crate) split: bool,
    /// True for a streamed model input.
    pub(crate) streamed: bool,
}

/// True when the literal names a file rather than a model.
pub(crate) fn is_path(target: &str) -> bool {
    target.contains('/') || target.contains('\\') || target.ends_with(".json")
}

/// The module name stubs use when the plan cannot be loaded.
pub(crate) fn stub_name(target: &str) -> String {
    let stem = Path::new(target)
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or(target);
    let stem = stem.strip_suffix(".json").unwrap_or(stem);
    let stem = stem.strip_suffix(".plan").unwrap_or(stem);
    naming::model_module(stem)
}

pub(crate) fn load(lit: &LitStr) -> syn::Result<Unit> {
    let target = lit.value();
    let err = |msg: String| syn::Error::new(lit.span(), msg);
    let path = if is_path(&target) {
        resolve_relative(Path::new(&target))
    } else {
        let Some(dir) = std::env::var_os(PLAN_DIR_VAR) else {
            return Err(err(format!(
                "no plan for model `{target}`: {PLAN_DIR_VAR} is not set, so planner-build did not run for this crate; call planner_build::compile(\"model.toml\") from build.rs, or give the plan file's path"
            )));
        };
        PathBuf::from(dir).join(naming::plan_file(&target))
    };
    let text = match read_bounded(&path, MAX_PLAN_FILE).and_then(|b| {
        String::from_utf8(b).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }) {
        Ok(t) => t,
        Err(e) => {
            let mut msg = format!(
                "cannot read the plan of `{target}` at {}: {e}",
                path.display()
            );
            if !is_path(&target) {
                let known = known_models(path.parent());
                if known.is_empty() {
                    msg.push_str(
                        "; planner-build wrote no plan there, check the model name in the manifest",
                    );
                } else {
                    msg.push_str(&format!("; plans there: {}", known.join(", ")));
                }
            } else {
                msg.push_str("; the path is relative to this source file");
            }
            return Err(err(msg));
        }
    };
    let origin = path.display().to_string();
    let file = match read(&text, &origin).map_err(|e| err(e.to_string()))? {
        AnyPlan::Model(f) => f,
        AnyPlan::Group(g) => return load_group(g, path, &target).map_err(err),
    };
    if !is_path(&target) && naming::model_module(&file.model) != naming::model_module(&target) {
        return Err(err(format!(
            "the plan at {} is for model `{}`, not `{target}`; use include_model!(\"{}\")",
            path.display(),
            file.model,
            file.model
        )));
    }
    check_hash(&file.plan_hash, file.hash(), &path).map_err(err)?;
    prepare(file, path).map(Unit::one).map_err(err)
}

/// What `include_model!` found, ready for code generation: N >= 1 models over the unit's
/// arenas. A model's plan is a unit of one (its own arenas, each model arena its unit arena,
/// its blocks at base 0); a group's, its models over the group's arenas.
pub(crate) struct Unit {
    /// The group plan; `None` for a model alone.
    pub(crate) group: Option<GroupPlanFile>,
    /// The plan file's absolute path.
    pub(crate) path: PathBuf,
    /// The unit's arenas: the model's, or the group's.
    pub(crate) arenas: Vec<ArenaEntry>,
    /// Absolute path of each unit arena's blob file (`None` for arenas without a blob).
    pub(crate) blobs: Vec<Option<PathBuf>>,
    /// Each model, in plan order.
    pub(crate) models: Vec<Loaded>,
    /// For each model, the unit arena of each of its arenas.
    pub(crate) arena_map: Vec<Vec<usize>>,
    /// For each model, where its block starts in each of its arenas (its `base` among the
    /// group arena's users; 0 for an arena it owns no block of, such as shared weights).
    pub(crate) bases: Vec<Vec<u64>>,
}

impl Unit {
    /// A model's plan as a unit of one.
    fn one(l: Loaded) -> Unit {
        let n = l.file.arenas.len();
        Unit {
            group: None,
            path: l.path.clone(),
            arenas: l.file.arenas.clone(),
            blobs: l.blobs.clone(),
            arena_map: vec![(0..n).collect()],
            bases: vec![vec![0; n]],
            models: vec![l],
        }
    }

    /// The init-time fills of unit arena `i`: every model's int8 variables in it that start
    /// at their zero point.
    pub(crate) fn fills_of<T>(
        &self,
        i: usize,
        fill: impl Fn(&PlanFile, usize) -> Vec<T>,
    ) -> Vec<T> {
        let mut out = Vec::new();
        for (l, map) in self.models.iter().zip(&self.arena_map) {
            for a in (0..map.len()).filter(|&a| map[a] == i) {
                out.extend(fill(&l.file, a));
            }
        }
        out
    }
}

fn load_group(file: GroupPlanFile, path: PathBuf, target: &str) -> Result<Unit, String> {
    if !is_path(target) && naming::model_module(&file.group) != naming::model_module(target) {
        return Err(format!(
            "the plan at {} is for group `{}`, not `{target}`; use include_model!(\"{}\")",
            path.display(),
            file.group,
            file.group
        ));
    }
    check_hash(&file.plan_hash, file.hash(), &path)?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let blobs: Vec<Option<PathBuf>> = file
        .arenas
        .iter()
        .map(|a| a.arena.blob.as_ref().map(|b| dir.join(&b.file)))
        .collect();
    let mut models = Vec::new();
    let mut arena_map = Vec::new();
    for m in &file.models {
        check_hash(&m.plan_hash, m.hash(), &path)?;
        let mut map = Vec::new();
        for a in &m.arenas {
            let g = file.arenas.iter().position(|g| g.arena == *a).ok_or_else(|| {
                format!(
                    "bad plan file {}: arena {} of model `{}` differs from the group's arena of that name; {REBUILD}",
                    path.display(),
                    a.name,
                    m.model
                )
            })?;
            map.push(g);
        }
        arena_map.push(map);
        models.push(prepare(m.clone(), path.clone())?);
    }
    let mut names = std::collections::BTreeSet::new();
    for m in &file.models {
        if !names.insert(naming::model_module(&m.model)) {
            return Err(format!(
                "bad plan file {}: two models of group `{}` are named `{}`; {REBUILD}",
                path.display(),
                file.group,
                m.model
            ));
        }
    }
    for set in &file.concurrent {
        let mut seen = std::collections::BTreeSet::new();
        for name in set {
            let problem = if file.model(name).is_none() {
                "which is no model of the group"
            } else if !seen.insert(name) {
                "twice (two handles to one model's bytes at once)"
            } else {
                continue;
            };
            return Err(format!(
                "bad plan file {}: concurrent set {set:?} of group `{}` names model `{name}` {problem}; {REBUILD}",
                path.display(),
                file.group,
            ));
        }
    }
    let bases = file
        .models
        .iter()
        .zip(&arena_map)
        .map(|(m, map)| {
            map.iter()
                .map(|&a| {
                    file.arenas[a]
                        .users
                        .iter()
                        .find(|u| u.model == m.model)
                        .map_or(0, |u| u.base)
                })
                .collect()
        })
        .collect();
    Ok(Unit {
        arenas: file.arenas.iter().map(|ga| ga.arena.clone()).collect(),
        group: Some(file),
        path,
        blobs,
        models,
        arena_map,
        bases,
    })
}

/// Checks what code generation relies on in one model's plan and computes its tables.
fn prepare(file: PlanFile, path: PathBuf) -> Result<Loaded, String> {
    check_indices(&file).map_err(|m| {
        format!(
            "bad plan file {}: {m}; regenerate it with planner-build",
            path.display()
        )
    })?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let blobs = file
        .arenas
        .iter()
        .map(|a| a.blob.as_ref().map(|b| dir.join(&b.file)))
        .collect::<Vec<_>>();
    check_blobs(&file, &blobs)?;
    check_in_place(&file)
        .map_err(|m| format!("bad plan file {}: {m}; {REBUILD}", path.display()))?;
    check_prepared(&file)
        .map_err(|m| format!("bad plan file {}: {m}; {REBUILD}", path.display()))?;
    let stage = check_patches(&file)
        .map_err(|m| format!("bad plan file {}: {m}; {REBUILD}", path.display()))?;
    let mut elements = Vec::new();
    for (t, v) in file.tensors.iter().zip(&stage) {
        if v.is_some_and(|v| !v.whole) {
            // A dense stage tensor's views hold what its slot holds: its largest region,
            // as placed (`check_patches` checked its type has a size; the `const` check
            // proves each region fits).
            let bytes = t.dtype.bits().unwrap_or(8).div_ceil(8).max(1);
            elements.push(t.size / bytes);
            continue;
        }
        let n = view_elements(t.dtype, &t.shape, t.size).ok_or_else(|| {
            format!(
                "tensor `{}` of model `{}` has shape {:?}, whose element count overflows; fix the shape",
                t.id, file.model, t.shape
            )
        })?;
        elements.push(n);
    }
    let roots = (0..file.tensors.len())
        .map(|i| {
            planner_planfile::alias_root(i, file.tensors.len(), |r| {
                file.tensors[r].alias_of.map(|n| n as usize)
            })
        })
        .collect();
    Ok(Loaded {
        file,
        path,
        blobs,
        elements,
        roots,
        stage,
    })
}

/// The fix for a plan file or blob that is not what planner-build wrote.
const REBUILD: &str = "rebuild so planner-build writes it again (touch the manifest, or `cargo clean -p <your crate>`), and change the manifest rather than the plan";

/// The plan hash the file states must be the hash of its content: a hand edit, even one
/// that keeps the plan valid, would make the Rust views and the C header (and anything
/// else built from the written plan) disagree while both report the same `PLAN_HASH`.
fn check_hash(stated: &str, content: u64, path: &Path) -> Result<(), String> {
    if stated == format!("fnv1a64:{content:016x}") {
        return Ok(());
    }
    Err(format!(
        "the plan file {} was edited after planner-build wrote it: it states plan_hash {stated:?} but its content hashes to \"fnv1a64:{content:016x}\"; {REBUILD}",
        path.display(),
    ))
}

/// Every blob the plan names exists and has the bytes the plan's hash covers.
fn check_blobs(file: &PlanFile, blobs: &[Option<PathBuf>]) -> Result<(), String> {
    for (a, blob) in file.arenas.iter().zip(blobs) {
        let (Some(p), Some(entry)) = (blob, &a.blob) else {
            continue;
        };
        if !p.is_file() {
            return Err(format!(
                "the blob of arena {} of model `{}` is missing: {} does not exist; re-run the build so planner-build writes it",
                a.name,
                file.model,
                p.display()
            ));
        }
        check_blob_hash(&file.model, &a.name, p, &entry.hash, entry.size)?;
    }
    Ok(())
}

/// The longest plan file read: far above the plan of any model a microcontroller runs.
const MAX_PLAN_FILE: u64 = 256 << 20;

/// Reads at most `limit` bytes of the regular file `path`: a device or a fifo in place of a
/// plan or blob would otherwise be read until memory runs out, inside rustc.
fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    // Looked at before opening: opening a fifo waits for a writer.
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other(
            "it is not a regular file (a device, fifo or directory)",
        ));
    }
    if meta.len() > limit {
        return Err(std::io::Error::other(format!(
            "it is {} bytes, more than the {limit} bytes planner-build writes there",
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A blob's bytes must hash to what the plan (whose hash covers it) says.
fn check_blob_hash(
    model: &str,
    arena: &str,
    path: &Path,
    want: &str,
    size: u64,
) -> Result<(), String> {
    let bytes = read_bounded(path, size).map_err(|e| {
        format!(
            "cannot read the blob of arena {arena} of model `{model}` at {}: {e}; {REBUILD}",
            path.display()
        )
    })?;
    let got = format!("fnv1a64:{:016x}", planner_planfile::fnv1a64(&bytes));
    if got == want {
        return Ok(());
    }
    Err(format!(
        "the blob of arena {arena} of model `{model}` at {} was changed after planner-build wrote it: the plan says {want:?} but its bytes hash to {got:?}; {REBUILD}",
        path.display()
    ))
}

/// A relative plan path is relative to the source file holding the macro call, as for
/// `include_bytes!`; made absolute so the expansion's `include_bytes!` finds it from any
/// file.
fn resolve_relative(p: &Path) -> PathBuf {
    if p.is_absolute() {
        return p.to_path_buf();
    }
    let source_dir = proc_macro::Span::call_site()
        .local_file()
        .and_then(|f| f.parent().map(Path::to_path_buf));
    let base = match source_dir {
        Some(d) => d,
        None => std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .unwrap_or_default(),
    };
    let joined = base.join(p);
    if joined.is_absolute() {
        joined
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(&joined))
            .unwrap_or(joined)
    }
}

fn known_models(dir: Option<&Path>) -> Vec<String> {
    let mut out: Vec<String> = dir
        .and_then(|d| std::fs::read_dir(d).ok())
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".plan.json").map(str::to_string))
        .collect();
    out.sort();
    out
}

/// Elements a view of the tensor has: the shape's product for types with a Rust
/// counterpart, the byte size for types viewed as raw bytes.
pub(crate) fn view_elements(dtype: DType, shape: &[u64], size: u64) -> Option<u64> {
    match dtype {
        DType::I4 | DType::String | DType::Resource | DType::Variant => Some(size),
        _ => shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d)),
    }
}

/// Everything code generation indexes must be in range, and every number it prints
/// must be a valid literal.
fn check_indices(f: &PlanFile) -> Result<(), String> {
    let nt = f.tensors.len();
    let na = f.arenas.len();
    let in_range = |t: u32, what: &str| {
        if (t as usize) < nt {
            Ok(())
        } else {
            Err(format!(
                "{what} names tensor #{t}, but the plan has {nt} tensors"
            ))
        }
    };
    for a in &f.arenas {
        for memory in [&a.memory, &a.source_memory] {
            if !f.memories.iter().any(|m| &m.name == memory) {
                return Err(format!(
                    "arena {} uses memory `{memory}`, which the plan does not list",
                    a.name
                ));
            }
        }
        if a.role != planner_planfile::ArenaRole::Constant && a.section.is_none() && !a.app_bound {
            return Err(format!("arena {} has no section", a.name));
        }
        if a.role == planner_planfile::ArenaRole::Constant && a.blob.is_none() {
            return Err(format!("constant arena {} has no blob", a.name));
        }
        if a.is_staged() && a.section.is_none() && !a.app_bound {
            return Err(format!(
                "staged constant arena {} has no runtime section",
                a.name
            ));
        }
    }
    let mut names = std::collections::BTreeSet::new();
    for a in &f.arenas {
        if !names.insert((a.role, naming::arena_field(a.role, &a.memory))) {
            return Err(format!("arena {} is listed twice", a.name));
        }
    }
    for t in &f.tensors {
        if t.arena as usize >= na {
            return Err(format!(
                "tensor `{}` names arena #{}, but the plan has {na} arenas",
                t.id, t.arena
            ));
        }
        if let Some(a) = t.alias_of {
            in_range(a, &format!("tensor `{}`", t.id))?;
        }
        if let Some(q) = &t.quantization
            && q.non_finite_scale().is_some()
        {
            return Err(format!(
                "tensor `{}` has a scale that is not a finite number",
                t.id
            ));
        }
    }
    for (k, op) in f.ops.iter().enumerate() {
        let what = format!("op {k} ({})", op.opcode);
        for t in op
            .inputs
            .iter()
            .flatten()
            .chain(&op.outputs)
            .chain(&op.scratch)
        {
            in_range(*t, &what)?;
        }
    }
    for io in f.inputs.iter().chain(&f.outputs) {
        in_range(io.tensor, &format!("input/output `{}`", io.name))?;
    }
    if nt > u32::MAX as usize / 2 || f.ops.len() > u32::MAX as usize / 2 {
        return Err("the plan has too many tensors or ops".to_string());
    }
    Ok(())
}

/// Every in-place declaration names an input, an output and a temporary of its op, of a
/// kind that can run in place, with the output at the input's bytes and the input read by
/// no later op (the `const` check proves the rest of the layout).
fn check_in_place(f: &PlanFile) -> Result<(), String> {
    let root = |t: usize| {
        planner_planfile::alias_root(t, f.tensors.len(), |r| {
            f.tensors[r].alias_of.map(|n| n as usize)
        })
    };
    for (k, op) in f.ops.iter().enumerate() {
        let Some(ip) = op.in_place else { continue };
        let what = format!("op {k} ({}) of model `{}`", op.opcode, f.model);
        if ip.rows {
            planner_planfile::rows::op_rows(f, op)
                .map_err(|why| format!("{what} runs with row overlap, but {why}"))?;
        } else if op.options.in_place_codegen().is_none() {
            return Err(format!(
                "{what} is declared to run in place, but {} never runs in place (in place: {} \
                 with their options)",
                op.opcode,
                planner_rt::op_kinds::OpKind::names(
                    |k| k.in_place != planner_rt::op_kinds::InPlace::Never
                )
            ));
        }
        let input = input_at(op, ip.input, &what, "runs in place over")? as usize;
        let output = *op.outputs.get(ip.output as usize).ok_or_else(|| {
            format!(
                "{what} runs in place into output #{}, but it has {} outputs",
                ip.output,
                op.outputs.len()
            )
        })? as usize;
        if let Some(temp) = ip.temp
            && temp as usize + 1 != op.scratch.len()
        {
            return Err(format!(
                "{what} names scratch #{temp} as its in-place temporary, but it has {} scratch \
                 tensors and the temporary is the last",
                op.scratch.len()
            ));
        }
        let (ti, to) = (&f.tensors[input], &f.tensors[output]);
        if ip.rows {
            // The `const` check proves how far after the output the input starts.
            if ti.arena != to.arena || ti.offset < to.offset {
                return Err(format!(
                    "{what} runs with row overlap, but its output `{}` (offset {} of arena \
                     #{}) does not start at or before its input `{}` (offset {} of arena #{})",
                    to.id, to.offset, to.arena, ti.id, ti.offset, ti.arena
                ));
            }
        } else if ti.arena != to.arena || ti.offset != to.offset {
            return Err(format!(
                "{what} runs in place, but its output `{}` is at offset {} of arena #{}, not at \
                 its input `{}`'s offset {} of arena #{}",
                to.id, to.offset, to.arena, ti.id, ti.offset, ti.arena
            ));
        }
        if ti.kind != planner_planfile::TensorKind::Activation {
            return Err(format!(
                "{what} runs in place over `{}`, which is a {} tensor, not an activation",
                ti.id,
                format!("{:?}", ti.kind).to_lowercase()
            ));
        }
        let class = root(input);
        let twice =
            op.inputs.iter().enumerate().any(|(j, t)| {
                j != ip.input as usize && t.is_some_and(|t| root(t as usize) == class)
            });
        if twice {
            return Err(format!(
                "{what} runs in place over `{}`, which it also reads as another input",
                ti.id
            ));
        }
        let later = f.ops.iter().enumerate().skip(k + 1).find(|(_, o)| {
            o.inputs
                .iter()
                .flatten()
                .any(|&t| root(t as usize) == class)
        });
        if let Some((j, o)) = later {
            return Err(format!(
                "{what} runs in place over `{}`, but op {j} ({}) reads it later",
                ti.id, o.opcode
            ));
        }
        if f.outputs.iter().any(|o| root(o.tensor as usize) == class) {
            return Err(format!(
                "{what} runs in place over `{}`, which is a model output",
                ti.id
            ));
        }
    }
    Ok(())
}

/// Input #`pos` of `op`, which `what` (the op) `uses`; an error when the op has no such
/// input or leaves it out.
fn input_at(op: &OpEntry, pos: u32, what: &str, uses: &str) -> Result<u32, String> {
    op.inputs
        .get(pos as usize)
        .copied()
        .flatten()
        .ok_or_else(|| {
            format!(
                "{what} {uses} input #{pos}, but it has {} inputs (or that one is left out)",
                op.inputs.len()
            )
        })
}

/// Every prepared input names an input of its op that is a constant of its layout's type and
/// shape for that op (`requant-v1`: int32 `[3, c_out]`, `c_out` the last dimension of the
/// op's output, on a `CONV_2D`, `DEPTHWISE_CONV_2D` or `FULLY_CONNECTED`), in a plan made
/// for a kernel set that reads it; every kernel scratch position names a scratch tensor of
/// its op, once. The generated `run()` then asks the kernel set for the layout's trait.
pub(crate) fn check_prepared(f: &PlanFile) -> Result<(), String> {
    use planner_planfile::{KernelSet, PreparedLayout, TensorKind};
    for (k, op) in f.ops.iter().enumerate() {
        let what = format!("op {k} ({}) of model `{}`", op.opcode, f.model);
        for (n, &s) in op.kernel_scratch.iter().enumerate() {
            if s as usize >= op.scratch.len() || op.kernel_scratch[..n].contains(&s) {
                return Err(format!(
                    "{what} lists scratch #{s} as kernel scratch, but it has {} scratch tensors \
                     (or lists that one twice)",
                    op.scratch.len()
                ));
            }
        }
        let Some(p) = op.prepared else { continue };
        if f.kernels == KernelSet::Reference {
            return Err(format!(
                "{what} has a prepared input, but the plan is for the reference kernel set, \
                 which prepares none"
            ));
        }
        let t = input_at(op, p.input, &what, "is prepared with")?;
        let t = &f.tensors[t as usize];
        match p.layout {
            PreparedLayout::RequantV1 => {
                const KINDS: [&str; 3] = ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"];
                if !KINDS.contains(&op.opcode.as_str()) {
                    return Err(format!(
                        "{what} is prepared with requant-v1, which only {} ops read",
                        KINDS.join(", ")
                    ));
                }
                let channels = op
                    .outputs
                    .first()
                    .and_then(|&o| f.tensors[o as usize].shape.last().copied());
                let ok = t.kind == TensorKind::Constant
                    && t.dtype == DType::I32
                    && channels.is_some_and(|c| t.shape == [3, c]);
                if !ok {
                    return Err(format!(
                        "{what} is prepared with requant-v1 input #{} `{}` ({} {} {:?}); it must \
                         be a constant i32 [3, {}] (three rows of one per output channel)",
                        p.input,
                        t.id,
                        format!("{:?}", t.kind).to_lowercase(),
                        t.dtype.name(),
                        t.shape,
                        channels.map_or_else(|| "c_out".to_string(), |c| c.to_string())
                    ));
                }
            }
        }
    }
    Ok(())
}

/// What code generation relies on in a plan's patch stage (`PlanFile::patches`): the split
/// op exists, the grid is not empty, every stage tensor is an activation `[1, H, W, C]` of a
/// type with a Rust counterpart, listed once with one region per patch; every activation a
/// stage op touches is listed; no stage op runs in place; tensors other than the split
/// tensor are used by stage ops only; a streamed stage has one model input. The `const`
/// check (`rt::check::check_patches`) proves the regions fit and the lifetimes cover the
/// stage. Returns how the stage views each tensor.
fn check_patches(f: &PlanFile) -> Result<Vec<Option<StageView>>, String> {
    let mut views = vec![None; f.tensors.len()];
    let Some(p) = &f.patches else {
        return Ok(views);
    };
    let split_tensor = check_split(f, p)?;
    let streamed = p.input == planner_planfile::patch::PatchInput::Streamed;
    for (entry, pt) in p.tensors.iter().enumerate() {
        let t = pt.tensor as usize;
        let view = stage_view(f, p, entry, split_tensor, streamed)?;
        if views[t].is_some() {
            return Err(format!(
                "the patch stage of model `{}` lists tensor `{}` twice",
                f.model, f.tensors[t].id
            ));
        }
        views[t] = Some(view);
    }
    if views[split_tensor].is_none() {
        return Err(format!(
            "the patch stage of model `{}` does not list its split tensor `{}`",
            f.model, f.tensors[split_tensor].id
        ));
    }
    check_stage_ops(f, p, &views)?;
    let model = &f.model;
    if let Some(o) = f
        .outputs
        .iter()
        .find(|o| views[o.tensor as usize].is_some_and(|v| !v.split))
    {
        return Err(format!(
            "model output `{}` of model `{model}` is a tensor of the patch stage, which exists \
             only one region at a time",
            o.name
        ));
    }
    let streams = views.iter().flatten().filter(|v| v.streamed).count();
    if streamed && streams != 1 {
        return Err(format!(
            "the patch stage of model `{model}` streams its input, but it reads {streams} model \
             inputs; a streamed stage reads exactly one"
        ));
    }
    Ok(views)
}

/// The split op exists, the grid makes patches, the split op has an output: its index.
fn check_split(f: &PlanFile, p: &planner_planfile::patch::PatchPlan) -> Result<usize, String> {
    let model = &f.model;
    let split = p.split as usize;
    let Some(split_op) = f.ops.get(split) else {
        return Err(format!(
            "the patch stage of model `{model}` ends at op {split}, but the model has {} ops",
            f.ops.len()
        ));
    };
    let n = p.grid[0] as u64 * p.grid[1] as u64;
    if n == 0 || n > u32::MAX as u64 / 2 {
        return Err(format!(
            "the patch grid of model `{model}` is {}x{}, which makes no patches or too many",
            p.grid[0], p.grid[1]
        ));
    }
    match split_op.outputs.first() {
        Some(&t) => Ok(t as usize),
        None => Err(format!(
            "the split op {split} ({}) of model `{model}` has no output",
            split_op.opcode
        )),
    }
}

/// Stage tensor entry `entry`: an activation `[1, H, W, C]` of a type with a Rust
/// counterpart, not aliased, with one region per patch; how the stage views it.
fn stage_view(
    f: &PlanFile,
    p: &planner_planfile::patch::PatchPlan,
    entry: usize,
    split_tensor: usize,
    streamed: bool,
) -> Result<StageView, String> {
    use planner_planfile::TensorKind;
    let model = &f.model;
    let pt = &p.tensors[entry];
    let t = pt.tensor as usize;
    let Some(e) = f.tensors.get(t) else {
        return Err(format!(
            "the patch stage of model `{model}` names tensor #{t}, but the plan has {} tensors",
            f.tensors.len()
        ));
    };
    let id = &e.id;
    if e.kind != TensorKind::Activation {
        return Err(format!(
            "the patch stage of model `{model}` lists tensor `{id}`, which is not an activation"
        ));
    }
    let [1, h, w, c] = e.shape[..] else {
        return Err(format!(
            "tensor `{id}` of the patch stage of model `{model}` has shape {:?}; a stage \
             tensor is [1, H, W, C]",
            e.shape
        ));
    };
    if h.checked_mul(w)
        .and_then(|a| a.checked_mul(c))
        .is_none_or(|a| a > u32::MAX as u64)
    {
        return Err(format!(
            "tensor `{id}` of the patch stage of model `{model}` has shape {:?}, too large \
             for a patch stage",
            e.shape
        ));
    }
    if matches!(
        e.dtype,
        DType::I4 | DType::String | DType::Resource | DType::Variant
    ) {
        return Err(format!(
            "tensor `{id}` of the patch stage of model `{model}` is {}, which the stage \
             cannot view by region",
            e.dtype.name()
        ));
    }
    let aliased = e.alias_of.is_some() || f.tensors.iter().any(|o| o.alias_of == Some(pt.tensor));
    if aliased {
        return Err(format!(
            "tensor `{id}` of the patch stage of model `{model}` shares its bytes with \
             another tensor (an alias), which a patch stage does not support"
        ));
    }
    let n = p.grid[0] as u64 * p.grid[1] as u64;
    if pt.regions.len() as u64 != n {
        return Err(format!(
            "tensor `{id}` of the patch stage of model `{model}` has {} regions for {n} \
             patches",
            pt.regions.len()
        ));
    }
    let input = f.inputs.iter().any(|io| io.tensor as usize == t);
    let is_split = t == split_tensor;
    Ok(StageView {
        entry,
        whole: is_split || (input && !streamed),
        split: is_split,
        streamed: input && streamed,
    })
}

/// Stage ops touch listed tensors only and run in place only dense over dense with the
/// same regions; ops after the stage use no tensor of it but the split tensor.
fn check_stage_ops(
    f: &PlanFile,
    p: &planner_planfile::patch::PatchPlan,
    views: &[Option<StageView>],
) -> Result<(), String> {
    use planner_planfile::TensorKind;
    let model = &f.model;
    let split = p.split as usize;
    for (k, op) in f.ops.iter().enumerate() {
        let touched = op.inputs.iter().flatten().chain(&op.outputs);
        if k <= split {
            // The stage rule the planner and its verifier apply: the kind, the output's
            // type, not in place.
            if let Some(out) = op.outputs.first().and_then(|&o| f.tensors.get(o as usize))
                && let Err(why) =
                    planner_planfile::patch::stage_op(&op.opcode, out.dtype, op.in_place.is_some())
            {
                return Err(format!(
                    "op {k} ({}) of model `{model}` cannot run in the patch stage (ops 0..={split}): \
                     {why}; rebuild with this planner, which plans such a model without patches \
                     or with an earlier split",
                    op.opcode
                ));
            }
            // In place inside the stage: output and input dense, of one element size, with
            // the same region in every patch, so each patch's output overwrites exactly its
            // input's bytes.
            let same = |i: usize, o: usize| {
                let (vi, vo) = (views[i]?, views[o]?);
                let (ti, to) = (&f.tensors[i], &f.tensors[o]);
                let fits = !vi.whole
                    && !vo.whole
                    && ti.dtype.bits() == to.dtype.bits()
                    && p.tensors[vi.entry].regions == p.tensors[vo.entry].regions;
                fits.then_some(())
            };
            if let Some(ip) = op.in_place {
                let pair = op
                    .inputs
                    .get(ip.input as usize)
                    .copied()
                    .flatten()
                    .zip(op.outputs.get(ip.output as usize).copied());
                if pair
                    .and_then(|(i, o)| same(i as usize, o as usize))
                    .is_none()
                {
                    return Err(format!(
                        "op {k} ({}) of the patch stage of model `{model}` runs in place, but \
                         its input and output are not dense stage tensors of one element size \
                         with the same region in every patch; plan it out of place",
                        op.opcode
                    ));
                }
            }
            for &t in touched {
                let e = &f.tensors[t as usize];
                if e.kind == TensorKind::Activation && views[t as usize].is_none() {
                    return Err(format!(
                        "op {k} ({}) of the patch stage of model `{model}` uses tensor `{}`, \
                         which the patch stage does not list",
                        op.opcode, e.id
                    ));
                }
            }
        } else if let Some(&t) = touched
            .clone()
            .find(|&&t| views[t as usize].is_some_and(|v| !v.split))
        {
            return Err(format!(
                "op {k} ({}) of model `{model}` runs after the patch stage but uses its tensor \
                 `{}`, which exists only one region at a time",
                op.opcode, f.tensors[t as usize].id
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
