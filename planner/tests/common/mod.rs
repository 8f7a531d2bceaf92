//! Helpers shared by the integration tests of `planner` (`mod common;`) and of
//! `planner-build` (through `#[path]`): the workspace, the bundled models, and graphs built
//! by hand.
// Each test crate that includes this uses some of the helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use planner::graph::{DType, Op, OpOptions, Tensor, TensorIndex, TensorKind};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The bundled models, `models/*.tflite` under the workspace `root`, sorted by path.
pub fn bundled_models(root: &Path) -> Vec<PathBuf> {
    tflite_files(&root.join("models"))
}

/// The `.tflite` files in `dir`, sorted by path.
pub fn tflite_files(dir: &Path) -> Vec<PathBuf> {
    let mut models: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tflite"))
        .collect();
    models.sort();
    models
}

/// An `i8` tensor `id` of `shape` and `kind`, without quantisation or data.
pub fn tensor(id: &str, shape: &[u64], kind: TensorKind) -> Tensor {
    Tensor {
        id: id.into(),
        name: id.into(),
        dtype: DType::I8,
        shape: shape.to_vec(),
        size: shape.iter().product(),
        kind,
        quantization: None,
        align_hint: None,
        data: None,
    }
}

/// An `i8` activation `id` of `shape`.
pub fn activation(id: &str, shape: &[u64]) -> Tensor {
    tensor(id, shape, TensorKind::Activation)
}

/// Op `opcode` reading the tensors `inputs` and writing `output`, without scratch.
pub fn op(opcode: &str, inputs: &[u32], output: u32, options: OpOptions) -> Op {
    Op {
        opcode: opcode.into(),
        inputs: inputs.iter().map(|&i| Some(TensorIndex(i))).collect(),
        outputs: vec![TensorIndex(output)],
        scratch: vec![],
        options,
    }
}

/// Deterministic pseudo-random numbers: the golden scripts' seeded SplitMix64 stream
/// (`planner_kernels::golden`), the same sequence everywhere.
pub struct Rng(pub planner_kernels::golden::SplitMix64);

impl Rng {
    /// The stream at `seed`.
    pub fn new(seed: u64) -> Self {
        Self(planner_kernels::golden::SplitMix64(seed))
    }

    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// 0..n (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    /// An index 0..n (0 when `n` is 0).
    pub fn index(&mut self, n: usize) -> usize {
        usize::try_from(self.below(n as u64)).unwrap_or(0)
    }

    /// lo..=hi
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `p` percent.
    pub fn pct(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.index(xs.len())]
    }
}

/// Asserts that `text` contains each of `parts`, showing it when one is missing.
#[track_caller]
pub fn assert_says(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part:?} in:\n{text}");
    }
}
