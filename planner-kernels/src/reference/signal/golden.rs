//! The goldens of the signal kernels' tests, as `scripts/tflm_signal_*.py` write them from
//! TFLM's interpreter (each script's docstring has its format), and the loops that replay
//! them through the kernels.
//!
//! A golden is one line an item, a keyword then fields separated by spaces (lines starting
//! with `#` are comments):
//!
//! ```text
//! op <custom code or name>
//! type <i16 | i32 | f32>                the element type, where the op has several
//! opt <key> <value>                     an option (`option` in the framing goldens;
//!                                       a bool as 0 or 1)
//! const <name> <values...>              a constant input
//! shape <in | input> <dims...>          input 0's shape (`out` or `output`: output 0's)
//! run [index]                           starts a run; runs follow each other on one
//!                                       interpreter (and one state)
//! in <name> <values...>                 a graph input of the run
//! out <name> <values...>                an output of the run (`-` for an element TFLM
//!                                       has not written yet)
//! valid <0 | 1>                         output 1, the valid flag of the framer and stacker
//! ```
//!
//! The framing goldens number their runs (`run <index>`), and their `in` and `out` lines
//! name no tensor: they are input 0 (`input`) and output 0 (`output`).

extern crate std;

use core::fmt::Debug;
use core::str::FromStr;
use std::vec;
use std::vec::Vec;

use crate::reference::KernelError;

/// Golden files by name: `goldens!["a", "b"]` is `[("a", <goldens/a.txt>), ...]`.
macro_rules! goldens {
    ($($name:literal),* $(,)?) => {
        [$((
            $name,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/src/reference/signal/goldens/",
                $name,
                ".txt"
            )),
        )),*]
    };
}
pub(super) use goldens;

/// Named rows of values, as text.
type Rows<'a> = Vec<(&'a str, Vec<&'a str>)>;

/// One parsed golden file.
pub(super) struct Golden<'a> {
    /// The op (`SignalWindow`, ..., or `framer`, ... in the framing goldens).
    pub(super) op: &'a str,
    /// The element type (`i16`, `i32`, `f32`), or empty.
    pub(super) ty: &'a str,
    options: Vec<(&'a str, &'a str)>,
    consts: Rows<'a>,
    /// Input 0's shape (empty when the golden does not give it).
    pub(super) input_shape: Vec<usize>,
    /// Output 0's shape (empty when the golden does not give it).
    pub(super) output_shape: Vec<usize>,
    /// The runs, in order.
    pub(super) runs: Vec<Run<'a>>,
}

/// One run: its inputs, TFLM's outputs and valid flag.
#[derive(Default)]
pub(super) struct Run<'a> {
    inputs: Rows<'a>,
    outputs: Rows<'a>,
    /// Output 1, the valid flag, for the ops that have one.
    pub(super) valid: Option<bool>,
}

/// `text` parsed as a `T`; panics (a broken golden) when it is not one.
fn parse<T: FromStr<Err: Debug>>(text: &str, what: &str) -> T {
    text.parse()
        .unwrap_or_else(|e| panic!("golden value {text:?} of {what}: {e:?}"))
}

/// The values of row `name` of `rows`; panics when there is none.
fn row<'r, 'a>(rows: &'r Rows<'a>, name: &str) -> &'r [&'a str] {
    rows.iter()
        .find(|(n, _)| *n == name)
        .map(|(_, values)| values.as_slice())
        .unwrap_or_else(|| panic!("golden has no row {name}"))
}

/// The values of row `name` of `rows`, as `T`.
fn values<T: FromStr<Err: Debug>>(rows: &Rows<'_>, name: &str) -> Vec<T> {
    row(rows, name).iter().map(|v| parse(v, name)).collect()
}

impl<'a> Golden<'a> {
    /// Parses a golden's text; panics (a broken test file) on a line it does not know or
    /// fewer than three runs.
    pub(super) fn parse(text: &'a str) -> Self {
        let mut g = Golden {
            op: "",
            ty: "",
            options: Vec::new(),
            consts: Vec::new(),
            input_shape: Vec::new(),
            output_shape: Vec::new(),
            runs: Vec::new(),
        };
        let dims = |d: &[&str]| d.iter().map(|v| parse(v, "a shape")).collect();
        let mut numbered = false;
        for line in text
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let mut words = line.split(' ');
            let kind = words.next().unwrap_or_default();
            let fields: Vec<&str> = words.collect();
            match (kind, fields.as_slice(), g.runs.last_mut()) {
                ("op", [op], _) => g.op = *op,
                ("type", [ty], _) => g.ty = *ty,
                ("opt" | "option", [key, value], _) => g.options.push((*key, *value)),
                ("const", [name, values @ ..], _) => g.consts.push((*name, values.to_vec())),
                ("shape", ["in" | "input", d @ ..], _) => g.input_shape = dims(d),
                ("shape", ["out" | "output", d @ ..], _) => g.output_shape = dims(d),
                ("run", index, _) if index.len() <= 1 => {
                    numbered = !index.is_empty();
                    g.runs.push(Run::default());
                }
                ("in" | "out", named, Some(run)) => {
                    let (name, values) = match named {
                        _ if numbered => (if kind == "in" { "input" } else { "output" }, named),
                        [name, values @ ..] => (*name, values),
                        [] => panic!("golden line {line:?} names no tensor"),
                    };
                    let rows = if kind == "in" {
                        &mut run.inputs
                    } else {
                        &mut run.outputs
                    };
                    rows.push((name, values.to_vec()));
                }
                ("valid", [flag], Some(run)) => run.valid = Some(*flag == "1"),
                _ => panic!("unknown golden line {line:?}"),
            }
        }
        assert!(g.runs.len() >= 3, "a golden holds at least three runs");
        g
    }

    /// The option `key`, as `T`.
    pub(super) fn opt<T: FromStr<Err: Debug>>(&self, key: &str) -> T {
        let (_, value) = self
            .options
            .iter()
            .find(|(k, _)| *k == key)
            .unwrap_or_else(|| panic!("golden has no option {key}"));
        parse(value, key)
    }

    /// The constant input `name`.
    pub(super) fn konst<T: FromStr<Err: Debug>>(&self, name: &str) -> Vec<T> {
        values(&self.consts, name)
    }
}

impl Run<'_> {
    /// The graph input `name` of this run.
    pub(super) fn input<T: FromStr<Err: Debug>>(&self, name: &str) -> Vec<T> {
        values(&self.inputs, name)
    }

    /// TFLM's output `name` of this run (the whole tensor; no element unwritten).
    pub(super) fn output<T: FromStr<Err: Debug>>(&self, name: &str) -> Vec<T> {
        values(&self.outputs, name)
    }

    /// TFLM's output `name` of this run, `None` where TFLM has not written yet (`-`).
    pub(super) fn written<T: FromStr<Err: Debug>>(&self, name: &str) -> Vec<Option<T>> {
        let values = row(&self.outputs, name).iter();
        values
            .map(|v| (*v != "-").then(|| parse(v, name)))
            .collect()
    }
}

/// An element type of the goldens: parsed from text, compared by its bits.
pub(super) trait Value: Copy + Debug + FromStr<Err: Debug> {
    /// The name of the type in a golden's `type` line.
    const NAME: &'static str;
    /// The value's bits (floats compare bit for bit).
    fn bits(self) -> u64;
}

impl Value for i16 {
    const NAME: &'static str = "i16";
    fn bits(self) -> u64 {
        u64::from(self as u16)
    }
}

impl Value for i32 {
    const NAME: &'static str = "i32";
    fn bits(self) -> u64 {
        u64::from(self as u32)
    }
}

impl Value for f32 {
    const NAME: &'static str = "f32";
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

/// Checks `got` (the output after run `run` of golden `name`) against the golden's `want`:
/// equal bits where TFLM wrote, `untouched` where it has not yet (`None`).
pub(super) fn check<T: Value>(name: &str, run: usize, got: &[T], want: &[Option<T>], untouched: T) {
    assert_eq!(got.len(), want.len(), "{name} run {run}: output length");
    for (i, (&g, w)) in got.iter().zip(want).enumerate() {
        let w = w.unwrap_or(untouched);
        assert_eq!(
            g.bits(),
            w.bits(),
            "{name} run {run} element {i}: got {g:?}, TFLM {w:?}"
        );
    }
}

/// Replays golden `name` through one kernel state: `kernel` (holding the state) runs on
/// each run's input and output 0, which starts as `output_shape`'s elements of `untouched`
/// and is kept from run to run (as TFLM's output tensor is), and returns the valid flag
/// (output 1) of the ops that have one. After each run, output 0 must equal TFLM's bit for
/// bit (and be `untouched` where TFLM has not written yet), and the flag TFLM's.
pub(super) fn replay_golden<T: Value>(
    name: &str,
    g: &Golden<'_>,
    untouched: T,
    mut kernel: impl FnMut(&[T], &mut [T]) -> Option<bool>,
) {
    let mut output = vec![untouched; g.output_shape.iter().product()];
    for (r, run) in g.runs.iter().enumerate() {
        let input: Vec<T> = run.input("input");
        let valid = kernel(&input, &mut output);
        check(name, r, &output, &run.written("output"), untouched);
        assert_eq!(valid, run.valid, "{name} run {r}: valid");
    }
}

/// [`replay_golden`] on each golden of `goldens` (of op `op`, element type `T`), its kernel
/// (and state) made by `start`.
pub(super) fn replay<'a, T: Value, K: FnMut(&[T], &mut [T]) -> Option<bool>>(
    goldens: &[(&str, &'a str)],
    op: &str,
    untouched: T,
    mut start: impl FnMut(&Golden<'a>) -> K,
) {
    for &(name, text) in goldens {
        let g = Golden::parse(text);
        assert_eq!((g.op, g.ty), (op, T::NAME), "{name}");
        replay_golden(name, &g, untouched, start(&g));
    }
}

/// A kernel of rows with a state (the delay, the overlap-add): `(option, input, input's
/// shape, output, state)`.
pub(super) type StateKernel<T> =
    fn(i32, &[T], &[usize], &mut [T], &mut [T]) -> Result<(), KernelError>;

/// [`replay`] for a [`StateKernel`] (of op `op`, output 0 starting as zeros): `start` gives
/// each golden's option and state length, the state starting as zeros.
pub(super) fn replay_with_state<T: Value + Default>(
    goldens: &[(&str, &str)],
    op: &str,
    kernel: StateKernel<T>,
    start: impl Fn(&Golden<'_>) -> (i32, usize),
) {
    replay(goldens, op, T::default(), |g| {
        let (option, state_len) = start(g);
        let shape = g.input_shape.clone();
        let mut state = vec![T::default(); state_len];
        move |x, y| {
            kernel(option, x, &shape, y, &mut state).unwrap();
            None
        }
    });
}

/// `kernel` as a function of an option, an input shape and the lengths of the input (ones),
/// the output and the state (zeros): for the tests of what it refuses.
pub(super) fn on_lengths(
    kernel: StateKernel<i16>,
) -> impl Fn(i32, &[usize], usize, usize, usize) -> Result<(), KernelError> {
    move |option, shape, input, out, state| {
        let input = vec![1i16; input];
        let mut output = vec![0i16; out];
        let mut state = vec![0i16; state];
        kernel(option, &input, shape, &mut output, &mut state)
    }
}

/// Runs `each` on every run of every golden of `goldens` (of op `op`) in order, `each`
/// (and the state it holds from run to run) made from the golden by `start`.
pub(super) fn each_run<'a, E: FnMut(&Run<'a>)>(
    goldens: &[(&str, &'a str)],
    op: &str,
    mut start: impl FnMut(&Golden<'a>) -> E,
) {
    for &(name, text) in goldens {
        let g = Golden::parse(text);
        assert_eq!(g.op, op, "{name}");
        g.runs.iter().for_each(start(&g));
    }
}

/// For ops whose output `output` TFLM writes whole: each run of each golden of `goldens`
/// (of op `op`) through `kernel` (made from the golden by `start`), which gets the run and
/// an output of TFLM's length filled with `untouched`, which must then equal TFLM's.
pub(super) fn outputs_match<'a, T, K>(
    goldens: &[(&str, &'a str)],
    op: &str,
    untouched: T,
    mut start: impl FnMut(&Golden<'a>) -> K,
) where
    T: Copy + Debug + PartialEq + FromStr<Err: Debug>,
    K: FnMut(&Run<'a>, &mut [T]),
{
    each_run(goldens, op, |g| {
        let mut kernel = start(g);
        move |run: &Run<'a>| {
            let want: Vec<T> = run.output("output");
            let mut output = vec![untouched; want.len()];
            kernel(run, &mut output);
            assert_eq!(output, want);
        }
    });
}
