//! Compiles a C header `planner-build` wrote and checks that it states the plan and nothing
//! else: the C compiler (`cc`) must accept it with every warning an error, and the macros it
//! defines (`cc -E -dM`, less what `<stdint.h>` and the compiler define) must be exactly
//! those the plan file calls for, with the plan's offsets, sizes, regions and hash. A name
//! that escaped its comment (a `*/`, a backslash-newline splice, a `??/` trigraph) would add,
//! drop or redefine a macro. Shared by `tests/names.rs` and the `generated_names` fuzz
//! target (`#[path]`), so both check the same way.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use planner::planfile::PlanFile;
use planner_build::c_names::CNames;

/// Runs `cc` with `args` on `source` (stdin, as C): its stdout, or what went wrong.
fn cc(args: &[&str], source: &str) -> Result<String, String> {
    let mut child = Command::new("cc")
        .args(args)
        .args(["-x", "c", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run cc: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(source.as_bytes())
            .map_err(|e| format!("cannot write to cc: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("cc did not finish: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cc {} failed:\n{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `#define NAME VALUE` lines of `cc -E -dM` as a map (a function-like macro keeps its
/// parameter list in the name).
fn macros(dump: &str) -> BTreeMap<String, String> {
    dump.lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .map(|l| {
            let (name, value) = l.split_once(' ').unwrap_or((l, ""));
            (name.to_string(), value.to_string())
        })
        .collect()
}

const FLAGS: [&str; 5] = ["-std=c11", "-Wall", "-Wextra", "-Wcomment", "-Werror"];

/// The macros a header defines beyond the compiler's and `<stdint.h>`'s.
pub fn defined(header: &str) -> Result<BTreeMap<String, String>, String> {
    static BASE: OnceLock<Result<BTreeMap<String, String>, String>> = OnceLock::new();
    let base = BASE
        .get_or_init(|| {
            cc(
                &[&FLAGS[..], &["-E", "-dM"]].concat(),
                "#include <stdint.h>\n",
            )
            .map(|d| macros(&d))
        })
        .clone()?;
    cc(&[&FLAGS[..], &["-fsyntax-only"]].concat(), header)?;
    let all = macros(&cc(&[&FLAGS[..], &["-E", "-dM"]].concat(), header)?);
    Ok(all
        .into_iter()
        .filter(|(n, v)| base.get(n) != Some(v))
        .collect())
}

/// The macros the plan calls for, with the values the check compares (`None`: present,
/// value not compared). The names are the header writer's ([`CNames`]); the values are
/// the plan file's.
pub fn expected(plan: &PlanFile) -> BTreeMap<String, Option<String>> {
    let names = CNames::of(plan);
    let p = &names.prefix;
    let mut out = BTreeMap::new();
    out.insert(format!("{p}_H"), Some(String::new()));
    out.insert(
        format!("{p}_PLAN_HASH"),
        Some(format!("UINT64_C(0x{:016x})", plan.hash())),
    );
    for (a, r) in plan.arenas.iter().zip(&names.regions) {
        out.insert(format!("{r}_SIZE"), Some(format!("{}u", a.size)));
        out.insert(format!("{r}_ALIGN"), Some(format!("{}u", a.alignment)));
    }
    for (t, n) in plan.tensors.iter().zip(&names.tensors) {
        let region = names.regions.get(t.arena as usize).cloned();
        out.insert(format!("{n}_REGION"), region);
        out.insert(format!("{n}_OFFSET"), Some(format!("{}u", t.offset)));
        out.insert(format!("{n}_SIZE"), Some(format!("{}u", t.size)));
        out.insert(format!("{n}_ELEMENTS"), None);
        out.insert(format!("{n}_TYPE"), None);
        if let Some(q) = &t.quantization
            && q.scale.len() == 1
            && q.zero_point.len() == 1
        {
            out.insert(format!("{n}_SCALE"), None);
            out.insert(
                format!("{n}_ZERO_POINT"),
                Some(format!("({})", q.zero_point[0])),
            );
        }
    }
    for io in &names.ios {
        for field in ["REGION", "OFFSET", "SIZE", "ELEMENTS", "TYPE"] {
            out.insert(
                format!("{}_{field}", io.stem),
                Some(format!("{}_{field}", io.tensor)),
            );
        }
    }
    out
}

/// Compiles `header` and compares its macros with the plan's: `Err` names every macro
/// missing, extra or with another value.
pub fn check(header: &str, plan: &PlanFile) -> Result<(), String> {
    let got = defined(header)?;
    let want = expected(plan);
    let mut problems = Vec::new();
    for (name, value) in &want {
        match (got.get(name), value) {
            (None, _) => problems.push(format!("{name} is not defined")),
            (Some(g), Some(w)) if g != w => {
                problems.push(format!("{name} is {g}, the plan says {w}"))
            }
            _ => {}
        }
    }
    for (name, value) in &got {
        if !want.contains_key(name) {
            problems.push(format!("{name} = {value} is not in the plan"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n--- header:\n{header}", problems.join("\n")))
    }
}
