//! Every bundled model, planned for the host and run through its generated `run()` with
//! either kernel set ([`Set`]: `planner_kernels::Reference` or `planner_kernels::Optimized`;
//! every model is compiled against both), for the golden tests (`tests/goldens.rs`, outputs
//! of TFLite Micro's reference kernels written by `scripts/tflm_goldens.py`, and their
//! `_optimized` twins) and the benchmark (`examples/bench.rs`).
//!
//! Inputs are made here exactly as the golden script makes them ([`input`]).
// The generated runners (`models.rs`) take inputs by index and push outputs one by one.
#![allow(clippy::get_first, clippy::vec_init_then_push)]

use planner::rt::kernel::Hooks;

pub mod align;

/// The two tests of `tests/ops.rs` and `tests/ops_optimized.rs`, each in a binary of its
/// own: `$whole`, every op of the models against TFLite Micro's per-op goldens, and
/// `$in_place`, the same for the models planned in place, both run with kernel set `$set` by
/// the `every_op` and `every_op_in_place` of `$goldens` (the caller's
/// `tests/support/op_goldens.rs` module).
#[macro_export]
macro_rules! every_op_tests {
    ($goldens:ident, $set:expr, $whole:ident, $in_place:ident $(,)?) => {
        #[test]
        fn $whole() {
            $goldens::every_op($set);
        }

        #[test]
        fn $in_place() {
            $goldens::every_op_in_place($set);
        }
    };
}

/// The kernel set a [`Runner`] runs its model with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Set {
    /// `planner_kernels::Reference`.
    Reference,
    /// `planner_kernels::Optimized`.
    Optimized,
}

impl Set {
    /// Both sets.
    pub const ALL: [Set; 2] = [Set::Reference, Set::Optimized];

    /// The set's name, as its type is spelled.
    pub fn name(self) -> &'static str {
        match self {
            Set::Reference => "Reference",
            Set::Optimized => "Optimized",
        }
    }
}

/// `$e` with `$k` bound to a `&mut` of the kernel set `$set` names (each arm compiles the
/// model's `run()` against one set): what the generated runners call `run_with` through.
macro_rules! with_set {
    ($set:expr, $k:ident => $e:expr) => {
        match $set {
            $crate::Set::Reference => {
                let $k = &mut planner_kernels::Reference;
                $e
            }
            $crate::Set::Optimized => {
                let $k = &mut planner_kernels::Optimized;
                $e
            }
        }
    };
}

/// One planned model.
pub trait Runner {
    /// The model's name (its file stem).
    fn name(&self) -> &'static str;
    /// Its plan file's bytes.
    fn plan_file(&self) -> &'static [u8];
    /// The generated options of each op (`<model>::OPTIONS`).
    fn options(&self) -> &'static [planner::rt::options::OpOptions];
    /// True when the kernel sets have every op kind the model uses (both have the same).
    fn supported(&self) -> bool;
    /// Fills input `j` with `inputs[j]` (little-endian bytes), runs the model with the
    /// kernel set `kernels` and `hooks`, and returns each output's bytes.
    fn run(
        &self,
        inputs: &[&[u8]],
        kernels: Set,
        hooks: &mut dyn Hooks,
    ) -> Result<Vec<Vec<u8>>, String>;
}

/// Element types whose little-endian bytes fill a tensor view.
pub trait Le: Copy {
    /// Bytes per element.
    const SIZE: usize;
    /// The element of `bytes` (exactly `SIZE` of them).
    fn from_le(bytes: &[u8]) -> Self;
    /// Appends the element's bytes.
    fn push_le(self, out: &mut Vec<u8>);
}

macro_rules! le {
    ($($t:ty),*) => {
        $(
            impl Le for $t {
                const SIZE: usize = core::mem::size_of::<$t>();
                fn from_le(bytes: &[u8]) -> Self {
                    let mut a = [0u8; core::mem::size_of::<$t>()];
                    a.copy_from_slice(bytes);
                    <$t>::from_le_bytes(a)
                }
                fn push_le(self, out: &mut Vec<u8>) {
                    out.extend_from_slice(&self.to_le_bytes());
                }
            }
        )*
    };
}
le!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);

/// Copies `bytes` into `dst`; an error when the lengths differ.
pub fn fill<T: Le>(dst: &mut [T], bytes: &[u8]) -> Result<(), String> {
    if bytes.len() != dst.len() * T::SIZE {
        return Err(format!(
            "input has {} bytes, the tensor takes {}",
            bytes.len(),
            dst.len() * T::SIZE
        ));
    }
    for (d, b) in dst.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
        *d = T::from_le(b);
    }
    Ok(())
}

/// Copies region `r` of the whole `[1, H, W, C]` tensor of shape `shape` whose
/// little-endian bytes are `whole` into `dst`, densely (row after row, `r.width · C`
/// elements each): what a streamed input's callback gives a patch. An error when the
/// lengths or the region do not fit.
pub fn fill_region<T: Le>(
    dst: &mut [T],
    whole: &[u8],
    shape: &[usize],
    r: planner::rt::kernel::Region,
) -> Result<(), String> {
    let &[_, h, w, c] = shape else {
        return Err(format!(
            "a streamed input has shape {shape:?}, not [1, H, W, C]"
        ));
    };
    if whole.len() != h * w * c * T::SIZE
        || dst.len() != r.height * r.width * c
        || r.top + r.height > h
        || r.left + r.width > w
    {
        return Err(format!(
            "region {r:?} of a {shape:?} input of {} bytes does not fit a buffer of {} elements",
            whole.len(),
            dst.len()
        ));
    }
    let row = r.width * c;
    for y in 0..r.height {
        let at = ((r.top + y) * w + r.left) * c * T::SIZE;
        fill(
            &mut dst[y * row..(y + 1) * row],
            &whole[at..at + row * T::SIZE],
        )?;
    }
    Ok(())
}

/// The bytes of a view.
pub fn bytes<T: Le>(src: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len() * T::SIZE);
    for &v in src {
        v.push_le(&mut out);
    }
    out
}

/// SplitMix64, the input stream the golden script uses.
pub struct SplitMix64(pub u64);

impl Iterator for SplitMix64 {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Some(z ^ (z >> 31))
    }
}

/// The bytes of an input of `count` elements of `dtype` (`int8`, `int16`, `float32`) from
/// the stream at `seed`: `(next >> 56)` as a signed byte, `(next >> 48)` as a signed 16-bit
/// value, `(next >> 40) / 2^24` as a float in [0, 1).
pub fn input(dtype: &str, count: usize, seed: u64) -> Option<Vec<u8>> {
    let stream = SplitMix64(seed).take(count);
    let mut out = Vec::new();
    match dtype {
        "int8" => stream.for_each(|v| ((v >> 56) as u8).push_le(&mut out)),
        "int16" => stream.for_each(|v| ((v >> 48) as u16).push_le(&mut out)),
        "float32" => stream.for_each(|v| {
            (((v >> 40) as f64 / f64::from(1u32 << 24)) as f32).push_le(&mut out);
        }),
        _ => return None,
    }
    Some(out)
}

/// The bytes of an input of `count` elements of `dtype` from the stream at `seed`, in the
/// range `[lo, hi]`, as `scripts/tflm_op_goldens.py` makes them: int8, int16, int32, int64,
/// uint32, uint64 and bool `lo + ((next >> 32) · (hi − lo + 1) >> 32)`; float32 `lo + (hi − lo) · ((next >>
/// 40) / 2^24)` in `f64`, rounded to `f32`. `None` for another type or an empty integer
/// range.
pub fn input_in(dtype: &str, count: usize, seed: u64, lo: f64, hi: f64) -> Option<Vec<u8>> {
    input_on(dtype, count, seed, (lo, hi), None)
}

/// [`input_in`] over `range`, float32 values then on the grid of `step` when given:
/// `floor(v / step + 0.5) · step` in `f64`, rounded to `f32` (the golden's `"step"`).
pub fn input_on(
    dtype: &str,
    count: usize,
    seed: u64,
    (lo, hi): (f64, f64),
    step: Option<f64>,
) -> Option<Vec<u8>> {
    let stream = SplitMix64(seed).take(count);
    let mut out = Vec::new();
    if dtype == "float32" {
        stream.for_each(|v| {
            let unit = (v >> 40) as f64 / f64::from(1u32 << 24);
            let mut x = lo + (hi - lo) * unit;
            if let Some(step) = step {
                x = (x / step + 0.5).floor() * step;
            }
            (x as f32).push_le(&mut out);
        });
        return Some(out);
    }
    // An integer type's value is the low `width` bytes of the 128-bit one (the `as` cast).
    let width = match dtype {
        "int8" | "bool" => 1,
        "int16" => 2,
        "int32" | "uint32" => 4,
        "int64" | "uint64" => 8,
        _ => return None,
    };
    let (lo, hi) = (lo as i128, hi as i128);
    let span = u128::try_from(hi.checked_sub(lo)?.checked_add(1)?).ok()?;
    // In 128 bits, as Python's integers compute it (a uint64 range's span needs them).
    stream.for_each(|v| {
        let x = lo + ((u128::from(v >> 32) * span) >> 32) as i128;
        out.extend_from_slice(&x.to_le_bytes()[..width]);
    });
    Some(out)
}

/// The little-endian bytes of a tensor view's elements (`None` for a view that holds none
/// itself).
pub fn data_bytes(data: &planner::rt::kernel::Data<'_>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    planner_kernels::golden::le_bytes(data, |b| out.push(b)).then_some(out)
}

/// A tap that keeps every op's outputs as bytes, by op index.
#[derive(Debug, Default)]
pub struct Record {
    /// `ops[k][j]`: output `j` of op `k`, as bytes (empty for an op not seen).
    pub ops: Vec<Vec<Vec<u8>>>,
    /// `inputs[k][j]`: input `j` of op `k` after it ran (`None` when left out).
    pub inputs: Vec<Vec<Option<Vec<u8>>>>,
}

impl Record {
    /// Output `j` of op `k` (empty when not seen).
    pub fn output(&self, k: usize, j: usize) -> &[u8] {
        cell(&self.ops, k, j).map_or(&[], Vec::as_slice)
    }

    /// Input `j` of op `k` after it ran (empty when not seen or left out).
    pub fn input(&self, k: usize, j: usize) -> &[u8] {
        cell(&self.inputs, k, j)
            .and_then(Option::as_deref)
            .unwrap_or_default()
    }
}

/// Entry `j` of op `k`'s row of `table`, when there is one.
fn cell<T>(table: &[Vec<T>], k: usize, j: usize) -> Option<&T> {
    table.get(k)?.get(j)
}

/// The bytes of a hex string (a pair that is not hex gives 0).
pub fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len() / 2)
        .map(|k| u8::from_str_radix(hex.get(2 * k..2 * k + 2).unwrap_or(""), 16).unwrap_or(0))
        .collect()
}

impl Hooks for Record {
    fn tap(&mut self, op: &planner::rt::kernel::Tap<'_, '_>) {
        if self.ops.len() <= op.index {
            self.ops.resize(op.index + 1, Vec::new());
            self.inputs.resize(op.index + 1, Vec::new());
        }
        self.ops[op.index] = (0..op.outputs())
            .map(|j| {
                op.output(j)
                    .and_then(|y| data_bytes(&y.data))
                    .unwrap_or_default()
            })
            .collect();
        self.inputs[op.index] = (0..op.inputs())
            .map(|j| op.input(j).and_then(|x| data_bytes(&x.data)))
            .collect();
    }
}

/// FNV-1a 64 of `bytes`, as the golden files spell it.
pub fn fnv1a64(bytes: &[u8]) -> String {
    format!("{:016x}", planner::planfile::fnv1a64(bytes))
}

include!(concat!(env!("OUT_DIR"), "/models.rs"));

/// Reads `goldens/<rel>.json` of this crate (`rel`: `ops/te_mcunet_vww`, ...); panics
/// naming the file and the script that writes it when it is missing or not JSON.
pub fn golden_json(rel: &str, script: &str) -> serde_json::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("goldens")
        .join(format!("{rel}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run {script} to write it", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{}: not JSON: {e}; run {script} to rewrite it",
            path.display()
        )
    })
}

/// Added to the FNV-1a 64 of a model's file stem: the seeds of the per-op goldens' inputs
/// (`scripts/tflm_op_goldens.py`'s `OPS_SALT`).
pub const OPS_SALT: u64 = 0x0BE5_0000;

/// Added to the FNV-1a 64 of a model's file stem: the seeds of the state goldens' inputs
/// (`scripts/tflm_single_ops_lstm.py`'s `STATE_SALT`).
pub const STATE_SALT: u64 = 0x57A7_E000;

/// The SplitMix64 seed of input `input` of golden run `run` of the model whose file stem is
/// `stem`, as the golden scripts derive it (`input_seed`): FNV-1a 64 of the stem's bytes,
/// plus `salt + 16 · run + input`, wrapping. It depends on the model's name only, so adding
/// a model changes no other model's inputs.
pub fn input_seed(stem: &str, salt: u64, run: usize, input: usize) -> u64 {
    planner::planfile::fnv1a64(stem.as_bytes())
        .wrapping_add(salt)
        .wrapping_add(16 * run as u64 + input as u64)
}

/// The inputs of run `r` of a per-op or state golden (`{"model": stem, "runs": [{"inputs":
/// [{dtype, shape, seed, lo, hi, fnv1a64}, ...]}, ...]}`), made with [`input_in`] from the
/// seed [`input_seed`] derives from the model's name and `salt` ([`OPS_SALT`],
/// [`STATE_SALT`]); panics when a stored seed or digest differs from the one made here.
pub fn run_inputs(golden: &serde_json::Value, r: usize, salt: u64) -> Vec<Vec<u8>> {
    let none = Vec::new();
    let model = golden["model"].as_str().unwrap_or("");
    let mut out = Vec::new();
    for (k, i) in golden["runs"][r]["inputs"]
        .as_array()
        .unwrap_or(&none)
        .iter()
        .enumerate()
    {
        let seed = input_seed(model, salt, r, k);
        assert_eq!(
            i["seed"].as_u64(),
            Some(seed),
            "{model} run {r} input {k}: the golden's seed is not the one derived from the \
             model's name ({seed}); rewrite the golden with its script"
        );
        let count: u64 = i["shape"]
            .as_array()
            .unwrap_or(&none)
            .iter()
            .map(|d| d.as_u64().unwrap_or(0))
            .product();
        let bytes = input_on(
            i["dtype"].as_str().unwrap_or(""),
            count as usize,
            seed,
            (
                i["lo"].as_f64().unwrap_or(0.0),
                i["hi"].as_f64().unwrap_or(0.0),
            ),
            i["step"].as_f64(),
        )
        .unwrap_or_else(|| panic!("{model} input {i}: a type the generator does not know"));
        assert_eq!(
            fnv1a64(&bytes),
            i["fnv1a64"].as_str().unwrap_or(""),
            "{model}: input differs from the script's: {i}"
        );
        out.push(bytes);
    }
    out
}
