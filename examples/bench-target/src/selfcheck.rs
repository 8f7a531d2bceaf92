//! On the board: random one-op cases (build.rs, `build/cases.rs`) through the reference and
//! the optimized kernel sets, output for output (and, for `SVDF`, state for state after two
//! steps). The optimized set's Helium and DSP paths
//! run only here and in the models' runs; this is where an off-by-one in them shows on
//! shapes no bundled model has.

use planner::rt::kernel::{
    Conv2d, DepthwiseConv2d, DepthwiseConv2dInPlace, FullyConnected, In, Kernel, OpView, Out, Svdf,
};
use planner::rt::options as o;
use planner::rt::{Quant, TensorInfo};
use planner_kernels::KernelError;
use planner_kernels::golden::SplitMix64;

/// The options of a case's op, which also names its kind.
pub enum Options {
    Conv(o::Conv2dOptions),
    Depthwise(o::DepthwiseConv2dOptions),
    Fc(o::FullyConnectedOptions),
    /// `SVDF` with an int8 state: its options, the time weights' and the state's shapes and
    /// quantisation (the filter is the feature weights).
    Svdf(
        o::SvdfOptions,
        &'static [usize],
        &'static [usize],
        Quant,
        Quant,
    ),
}

/// Every kind the check runs.
pub trait Kinds:
    Kernel<Error = KernelError>
    + Conv2d
    + DepthwiseConv2d
    + DepthwiseConv2dInPlace
    + FullyConnected
    + Svdf
{
}

impl<K> Kinds for K where
    K: Kernel<Error = KernelError>
        + Conv2d
        + DepthwiseConv2d
        + DepthwiseConv2dInPlace
        + FullyConnected
        + Svdf
{
}

/// The tensors of one case: input, filter, bias, `SVDF`'s time weights, and the state it
/// steps (read and written).
struct Tensors<'a> {
    x: &'a [i8],
    w: &'a [i8],
    b: &'a [i32],
    t: &'a [i8],
}

/// One op: its input, filter and output shapes and quantisation, whether it has a bias (and
/// an extreme one), the seed of its values and its options.
pub struct Case {
    pub x: &'static [usize],
    pub w: &'static [usize],
    pub y: &'static [usize],
    pub x_quant: Quant,
    pub w_quant: Quant,
    pub y_quant: Quant,
    pub bias: bool,
    pub extreme_bias: bool,
    pub seed: u64,
    pub options: Options,
}

mod cases {
    include!(concat!(env!("OUT_DIR"), "/cases.rs"));
}
pub use cases::CASES;

/// Buffer sizes (see build/cases.rs).
const MAX: usize = 4096;
const MAX_CHANNELS: usize = 64;

/// A view's description of a case's tensor (shared with the LSTM check).
pub fn info<T>(shape: &'static [usize], quant: Option<Quant>) -> TensorInfo<T> {
    TensorInfo {
        id: "t",
        name: "t",
        dtype: "",
        shape,
        elements: shape.iter().product(),
        size: 0,
        quant,
        element: core::marker::PhantomData,
    }
}

/// Runs `case` with kernel set `k` into `y` (an `SVDF` twice, stepping `state`).
fn run<K: Kinds>(
    k: &mut K,
    case: &Case,
    v: &Tensors<'_>,
    y: &mut [i8],
    state: &mut [i8],
) -> Result<(), KernelError> {
    let out_c = *case.y.last().unwrap_or(&0);
    let bias_shape: &'static [usize] = &[MAX_CHANNELS];
    let xi = info::<i8>(case.x, Some(case.x_quant));
    let wi = info::<i8>(case.w, Some(case.w_quant));
    let bi = info::<i32>(bias_shape, None);
    let yi = info::<i8>(case.y, Some(case.y_quant));
    let bias = case.bias.then(|| In::new(&v.b[..out_c], &bi));
    if let Options::Svdf(opt, t_shape, s_shape, t_quant, s_quant) = &case.options {
        let ti = info::<i8>(t_shape, Some(*t_quant));
        let si = info::<i8>(s_shape, Some(*s_quant));
        let inputs = [
            Some(In::new(v.x, &xi)),
            Some(In::new(v.w, &wi)),
            Some(In::new(v.t, &ti)),
            bias,
            Some(In::variable(0, &si)),
        ];
        for _ in 0..2 {
            let mut outputs = [Out::new(&mut *y, &yi)];
            let mut variables = [Out::new(&mut *state, &si)];
            let op = OpView {
                index: 0,
                opcode: "CHECK",
                inputs: &inputs,
                outputs: &mut outputs,
                scratch: &mut [],
                variables: &mut variables,
            };
            k.svdf(op, opt)?;
        }
        return Ok(());
    }
    let inputs = [Some(In::new(v.x, &xi)), Some(In::new(v.w, &wi)), bias];
    let mut outputs = [Out::new(y, &yi)];
    let op = OpView {
        index: 0,
        opcode: "CHECK",
        inputs: &inputs,
        outputs: &mut outputs,
        scratch: &mut [],
        variables: &mut [],
    };
    match &case.options {
        Options::Conv(opt) => k.conv_2d(op, opt),
        Options::Depthwise(opt) => k.depthwise_conv_2d(op, opt),
        Options::Fc(opt) => k.fully_connected(op, opt),
        Options::Svdf(..) => Ok(()),
    }
}

/// A depthwise case with a depth multiplier of 1 and an output no larger than its input
/// run in place by `k`: `buf` starts as the input and ends with the output, with a
/// temporary of `tmp`'s length; `None` for any other case.
fn run_in_place<K: Kinds>(
    k: &mut K,
    case: &Case,
    v: &Tensors<'_>,
    buf: &mut [i8],
    tmp: &mut [i8],
) -> Option<Result<(), KernelError>> {
    let Options::Depthwise(opt) = &case.options else {
        return None;
    };
    // The buffer spans the input and the output.
    let span = v.x.len().max(case.y.iter().product());
    if opt.depth_multiplier != 1 || buf.len() < span {
        return None;
    }
    let buf = &mut buf[..span];
    let out_c = *case.y.last().unwrap_or(&0);
    let bias_shape: &'static [usize] = &[MAX_CHANNELS];
    let tmp_shape: &'static [usize] = &[MAX];
    let (xi, wi) = (
        info::<i8>(case.x, Some(case.x_quant)),
        info::<i8>(case.w, Some(case.w_quant)),
    );
    let (bi, yi, ti) = (
        info::<i32>(bias_shape, None),
        info::<i8>(case.y, Some(case.y_quant)),
        info::<i8>(tmp_shape, None),
    );
    buf[..v.x.len()].copy_from_slice(v.x);
    let inputs = [
        Some(In::in_place(0, &xi)),
        Some(In::new(v.w, &wi)),
        case.bias.then(|| In::new(&v.b[..out_c], &bi)),
    ];
    let mut outputs = [Out::new(buf, &yi)];
    let mut scratch = [Out::new(tmp, &ti)];
    let op = OpView {
        index: 0,
        opcode: "CHECK",
        inputs: &inputs,
        outputs: &mut outputs,
        scratch: &mut scratch,
        variables: &mut [],
    };
    Some(k.depthwise_conv_2d_in_place(op, opt))
}

/// The first case whose outputs (or errors) differ between the sets.
#[derive(Debug)]
pub struct Mismatch {
    pub case: usize,
    pub element: usize,
    pub reference: Result<i8, KernelError>,
    pub optimized: Result<i8, KernelError>,
}

/// What [`check`] saw: cases run, of them refused by both sets (with the same error), and
/// of the others those whose outputs are not all one value (the comparison's evidence).
#[derive(Debug, Default)]
pub struct Stats {
    pub cases: usize,
    pub refused: usize,
    pub varied: usize,
}

/// Bytes at a word boundary.
#[repr(C, align(4))]
struct Aligned([i8; MAX]);

/// Runs every case through `reference` and `optimized`; what ran and the first difference.
pub fn check<R: Kinds, P: Kinds>(
    reference: &mut R,
    optimized: &mut P,
) -> (Stats, Option<Mismatch>) {
    let mut x = [0i8; MAX];
    let mut w = [0i8; MAX];
    // Word-aligned, as a plan places tensors: the DSP path reads an SVDF's time weights
    // and state of 8, 16 or 32 steps a pair of words at a time (`LDRD`), which needs it.
    let (mut t, mut s0, mut s1) = (Aligned([0; MAX]), Aligned([0; MAX]), Aligned([0; MAX]));
    let (t, s0, s1) = (&mut t.0, &mut s0.0, &mut s1.0);
    let mut b = [0i32; MAX_CHANNELS];
    let mut y0 = [0i8; MAX];
    let mut y1 = [0i8; MAX];
    // A depthwise op's buffer in place, for each set, and its temporary.
    let mut in_place = ([0i8; MAX], [0i8; MAX]);
    let mut temp = [0i8; MAX];
    let mut stats = Stats::default();
    for (n, case) in CASES.iter().enumerate() {
        stats.cases = n + 1;
        let len = |s: &[usize]| s.iter().product::<usize>();
        let (xl, wl, yl) = (len(case.x), len(case.w), len(case.y));
        let (tl, sl) = match &case.options {
            Options::Svdf(_, t, s, ..) => (len(t), len(s)),
            _ => (0, 0),
        };
        let mut rng = SplitMix64(case.seed);
        for v in x[..xl]
            .iter_mut()
            .chain(w[..wl].iter_mut())
            .chain(t[..tl].iter_mut())
            .chain(s0[..sl].iter_mut())
        {
            *v = (rng.next_u64() >> 56) as u8 as i8;
        }
        s1[..sl].copy_from_slice(&s0[..sl]);
        for v in b.iter_mut() {
            let r = rng.next_u64();
            *v = if case.extreme_bias {
                r as i32
            } else {
                (r as i32) >> 14
            };
        }
        y0[..yl].fill(0x5a);
        y1[..yl].fill(-0x5b);
        let v = Tensors {
            x: &x[..xl],
            w: &w[..wl],
            b: &b,
            t: &t[..tl],
        };
        let r0 = run(reference, case, &v, &mut y0[..yl], &mut s0[..sl]);
        let r1 = run(optimized, case, &v, &mut y1[..yl], &mut s1[..sl]);
        let differ = match (r0, r1) {
            (Ok(()), Ok(())) => {
                stats.varied += usize::from(y0[..yl].iter().any(|&v| v != y0[0]));
                // Output elements, then the state's (numbered on from the outputs).
                (0..yl)
                    .find(|&i| y0[i] != y1[i])
                    .map(|i| (i, Ok(y0[i]), Ok(y1[i])))
                    .or_else(|| {
                        (0..sl)
                            .find(|&i| s0[i] != s1[i])
                            .map(|i| (yl + i, Ok(s0[i]), Ok(s1[i])))
                    })
            }
            (Err(e0), Err(e1)) if e0 == e1 => {
                stats.refused += 1;
                None
            }
            (r0, r1) => Some((0, r0.map(|()| y0[0]), r1.map(|()| y1[0]))),
        };
        // A depthwise case that can run in place: both sets in place (elements numbered
        // on from the state's), each equal to the reference's output out of place.
        let differ = differ.or_else(|| {
            let (b0, b1) = (&mut in_place.0, &mut in_place.1);
            let r0 = run_in_place(reference, case, &v, b0, &mut temp)?;
            let r1 = run_in_place(optimized, case, &v, b1, &mut temp)?;
            let first = yl + sl;
            match (r0, r1) {
                (Ok(()), Ok(())) => (0..yl)
                    .find(|&i| b0[i] != y0[i] || b1[i] != y0[i])
                    .map(|i| (first + i, Ok(b0[i]), Ok(b1[i]))),
                (Err(e0), Err(e1)) if e0 == e1 => None,
                (r0, r1) => Some((first, r0.map(|()| b0[0]), r1.map(|()| b1[0]))),
            }
        });
        if let Some((element, reference, optimized)) = differ {
            return (
                stats,
                Some(Mismatch {
                    case: n,
                    element,
                    reference,
                    optimized,
                }),
            );
        }
    }
    (stats, None)
}
