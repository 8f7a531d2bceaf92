//! `planner export`: a plan in another tool's format.

use std::path::Path;
use std::process::ExitCode;

use planner::Error;
use planner::export::tflm;
use planner::manifest::Manifest;

use super::args::Target;

/// Runs `planner export ...`.
pub(super) fn run(target: Target) -> Result<ExitCode, Error> {
    match target {
        Target::Tflm {
            model,
            output,
            planner,
            kernel_scratch,
        } => {
            let extra = kernel_scratch
                .iter()
                .map(|s| parse_scratch(s))
                .collect::<Result<Vec<_>, _>>()?;
            let msg = tflm_export(&model, &output, planner.as_deref(), &extra)?;
            super::output::print(&format!("{msg}\n"));
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Plans `model`, writes it with the offline plan to `output`, reads it back and checks it;
/// returns the summary line.
fn tflm_export(
    model: &Path,
    output: &Path,
    planner: Option<&str>,
    extra: &[(usize, u64)],
) -> Result<String, Error> {
    super::output::output_file(output, "exported model")?;
    let bytes = planner::import::read_flatbuffer(model)?;
    let mut manifest = Manifest::for_model_file(model);
    super::input::override_planner(&mut manifest, planner)?;
    let done = tflm::export(&bytes, &manifest, extra, planner.is_some())?;
    super::output::warn(&done.planned);
    std::fs::write(output, &done.bytes).map_err(|e| Error::file(output, "write", e))?;
    let reserved: u64 = done.kernel_scratch.iter().map(|s| s.1).sum();
    let replaced = done
        .replaced
        .as_ref()
        .map(|p| {
            format!(
                "; planner `{p}` needed more than TFLM's own plan, so the export carries TFLM's own plan (planner `tflm`)"
            )
        })
        .unwrap_or_else(|| {
            if done.head > done.tflm_head {
                format!(
                    "; warning: TFLM's arena is {} bytes larger than with its own plan; drop --planner to export the smaller plan",
                    done.head - done.tflm_head
                )
            } else {
                String::new()
            }
        });
    Ok(format!(
        "wrote {}: {} of {} tensors at offline offsets, {} kernel scratch buffers ({reserved} bytes) left room for, non-persistent head {} bytes (planner {}; TFLM's own plan {} bytes), {} bytes ({} more than the model){replaced}",
        output.display(),
        done.fixed,
        done.offline.offsets.len(),
        done.kernel_scratch.len(),
        done.head,
        done.planned.planner,
        done.tflm_head,
        done.bytes.len(),
        done.bytes.len() - bytes.len()
    ))
}

/// `OP=BYTES` of `--kernel-scratch`.
fn parse_scratch(s: &str) -> Result<(usize, u64), Error> {
    let bad = || {
        Error::invalid_input(format!(
            "--kernel-scratch {s:?} is not OP=BYTES; write the op index and the bytes, such as 3=1024"
        ))
    };
    let (op, bytes) = s.split_once('=').ok_or_else(bad)?;
    let op = op.trim().parse().map_err(|_| bad())?;
    let bytes = planner::manifest::parse_size(bytes.trim()).ok_or_else(bad)?;
    Ok((op, bytes))
}
