//! The models the firmware runs end to end through `run()` and compares with TFLite Micro's
//! outputs: the Rust of their golden runs.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use planner::planfile::{PlanFile, naming};

/// The bundled models the firmware runs end to end through `run()` with the reference
/// kernels, on the golden inputs, and compares with TFLite Micro's outputs
/// (`tests/run-models/goldens/<model>.json`, written by `scripts/tflm_goldens.py`).
pub const GOLDEN_MODELS: [&str; 2] = ["tflm_person_detect_int8", "tiny_kws_dscnn_int8"];

/// `golden_<module>(&mut Model) -> Result<bool, ..>` for a model of [`GOLDEN_MODELS`]: fills
/// each input from its seeded stream, runs the model, and compares the outputs' bytes.
pub fn golden(p: &PlanFile) -> Option<String> {
    let stem = p.model.strip_prefix("canary_")?;
    if !GOLDEN_MODELS.contains(&stem) {
        return None;
    }
    let module = naming::model_module(&p.model);
    golden_fn(
        p,
        stem,
        &module,
        &format!("golden_{module}"),
        &format!("{module}::Model"),
    )
}

/// The golden run of `p` (model `stem` of `models/`) as `fn name(m: &mut ty)`, with the
/// model's items at `module`.
pub fn golden_fn(p: &PlanFile, stem: &str, module: &str, name: &str, ty: &str) -> Option<String> {
    let crate_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR")?);
    let path = crate_dir.join(format!("../../tests/run-models/goldens/{stem}.json"));
    println!("cargo::rerun-if-changed={}", path.display());
    let text = fs::read_to_string(&path).expect("the golden file exists");
    let g: serde_json::Value = serde_json::from_str(&text).expect("the golden file is JSON");
    let mut body = String::new();
    let inputs = naming::unique_idents(p.inputs.iter().map(|io| io.name.as_str()));
    for (input, i) in inputs.iter().zip(g["inputs"].as_array()?) {
        let fill = match i["dtype"].as_str() {
            Some("int8") => "fill_i8",
            Some("int16") => "fill_i16",
            _ => return None,
        };
        let _ = writeln!(
            body,
            "    crate::golden::{fill}(m.input_{input}_mut(), {});",
            i["seed"].as_u64()?
        );
    }
    let _ = writeln!(
        body,
        "    m.run(&mut planner_kernels::Reference)?;\n    let mut same = true;"
    );
    let outputs = naming::unique_idents(p.outputs.iter().map(|io| io.name.as_str()));
    for (output, o) in outputs.iter().zip(g["outputs"].as_array()?) {
        let hex = o["hex"].as_str()?;
        let bytes: Vec<String> = (0..hex.len() / 2)
            .map(|k| format!("0x{}", &hex[2 * k..2 * k + 2]))
            .collect();
        let _ = writeln!(
            body,
            "    same &= crate::golden::compare({module}::MODEL, {output:?}, crate::pod::bytes(m.output_{output}()), &[{}]);",
            bytes.join(", ")
        );
    }
    Some(format!(
        "/// Runs `{model}` on its golden inputs through `run()` and the reference kernels; true\n\
         /// when every output equals TFLite Micro's.\n\
         pub fn {name}(m: &mut {ty}) -> Result<bool, planner::rt::kernel::RunError<planner_kernels::KernelError>> {{\n\
         {body}    Ok(same)\n}}\n\n",
        model = p.model
    ))
}
