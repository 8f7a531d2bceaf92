//! The TFLM kernel scratch rules of the op-kind table (`planner::rt::op_kinds`) against TFLM.
//!
//! `scripts/tflm_kernel_scratch.py` wrote one-op models to `tests/data/tflm_scratch/` and,
//! from TFLM's head on each (the `tflite-micro` package's interpreter), the bytes its
//! reference kernel requested (`tests/data/tflm_kernel_scratch_ops.csv`). In a one-op model
//! every buffer is live at the op, so TFLM's head is the sum of the activations and the
//! scratch buffers, each rounded up to 16 bytes. This test (no Python) checks that the
//! table's rule gives exactly those bytes on every measured model, that every opcode of the
//! table was measured (SVDF and the LSTM are checked on the bundled models by
//! `tflm_figures.rs`), and that an op the table does not know is refused by name.

use std::path::{Path, PathBuf};

use planner::export::tflm::{self, KernelScratch};
use planner::import::tflite;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn align16(n: u64) -> u64 {
    n.div_ceil(16) * 16
}

/// `(case, opcode, head, activations, scratch)` rows.
fn measured() -> Vec<(String, String, u64, u64, u64)> {
    let text = std::fs::read_to_string(root().join("tests/data/tflm_kernel_scratch_ops.csv"))
        .expect("tests/data/tflm_kernel_scratch_ops.csv (scripts/tflm_kernel_scratch.py)");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("case,") && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let n = |k: usize| f[k].parse::<u64>().expect("a number");
            (f[0].to_string(), f[1].to_string(), n(2), n(3), n(4))
        })
        .collect()
}

#[test]
fn the_table_gives_tflm_s_measured_scratch_on_every_one_op_model() {
    let rows = measured();
    assert!(rows.len() >= 40, "{} measured cases", rows.len());
    for (case, opcode, head, activations, scratch) in &rows {
        assert_eq!(head - activations, *scratch, "{case}");
        let path = root().join(format!("tests/data/tflm_scratch/{case}.tflite"));
        let g = tflite::read(&path).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(g.ops.len(), 1, "{case}");
        assert_eq!(&g.ops[0].opcode, opcode, "{case}");
        // The model's activations as TFLM counts them, to show the figure is the kernel's.
        // (Not the bundled kernels' op-local scratch, which the importer adds.)
        let ours: Vec<usize> = g
            .ops
            .iter()
            .flat_map(|o| o.scratch.iter().map(|t| t.get()))
            .collect();
        let act: u64 = g
            .tensors
            .iter()
            .enumerate()
            .filter(|(i, _)| !ours.contains(i))
            .map(|(_, t)| t)
            .filter(|t| t.kind == planner::graph::TensorKind::Activation)
            .map(|t| align16(t.size))
            .sum();
        assert_eq!(act, *activations, "{case}: activations");
        let requests =
            tflm::reference_kernel_scratch(&g, &[]).unwrap_or_else(|e| panic!("{case}: {e}"));
        let ours: u64 = requests.iter().map(|r| align16(r.1)).sum();
        assert_eq!(
            ours, *scratch,
            "{case}: the exporter reserves {requests:?}, TFLM's kernel took {scratch} bytes"
        );
    }
    // Every rule of the table rests on a measurement (SVDF and the LSTM: tflm_figures.rs).
    let mut known = 0;
    for kind in planner::rt::op_kinds::OP_KINDS {
        let Some(rule) = kind.tflm_scratch else {
            continue;
        };
        known += 1;
        assert_eq!(tflm::kernel_scratch_rule(kind.name), Some(rule));
        if matches!(rule, KernelScratch::Svdf | KernelScratch::Lstm) {
            continue;
        }
        assert!(
            rows.iter().any(|r| r.1 == kind.name),
            "{} is in the table but was not measured",
            kind.name
        );
    }
    assert!(known >= 26, "{known} kinds with a known TFLM scratch");
}

#[test]
fn an_op_of_unknown_scratch_is_refused_by_name_unless_the_user_says_it() {
    let path = root().join("tests/data/tflm_scratch/mean_i8_1x7x5x9.tflite");
    let mut g = tflite::read(&path).unwrap();
    g.ops[0].opcode = "CUSTOM:SIGNAL_FFT".into();
    let e = tflm::reference_kernel_scratch(&g, &[]).unwrap_err();
    let m = e.to_string();
    assert!(m.contains("op 0 (`CUSTOM:SIGNAL_FFT`)"), "{m}");
    assert!(m.contains("--kernel-scratch 0=BYTES"), "{m}");
    assert_eq!(tflm::reference_kernel_scratch(&g, &[0]).unwrap(), vec![]);
}

#[test]
fn every_bundled_model_is_known() {
    for entry in std::fs::read_dir(root().join("models")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "tflite") {
            continue;
        }
        let g = tflite::read(&path).unwrap();
        tflm::reference_kernel_scratch(&g, &[]).unwrap_or_else(|e| panic!("{e}"));
    }
}
