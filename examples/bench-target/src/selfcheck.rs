//! On the board: random one-op cases (build.rs, `build/cases.rs`) through the reference and
//! the optimized kernel sets, output for output (and, for `SVDF`, state for state after two
//! steps). The optimized set's Helium and DSP paths
//! run only here and in the models' runs; this is where an off-by-one in them shows on
//! shapes no bundled model has.

use planner::rt::kernel::{
    Add, AddInPlace, Conv2d, DepthwiseConv2d, DepthwiseConv2dInPlace, FullyConnected, In, Kernel,
    Mean, Mul, MulInPlace, OpView, Out, Pad, Quantize, Sub, SubInPlace, Svdf,
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

/// `Kinds`: a kernel set with every kind of `$kind` (one list for the trait and its impl).
macro_rules! kinds {
    ($($kind:ident),* $(,)?) => {
        /// Every kind the board's one-op checks run (this one's and `elementwise_check`'s).
        pub trait Kinds: Kernel<Error = KernelError> $(+ $kind)* {}

        impl<K> Kinds for K where K: Kernel<Error = KernelError> $(+ $kind)* {}
    };
}

kinds!(
    Conv2d,
    DepthwiseConv2d,
    DepthwiseConv2dInPlace,
    FullyConnected,
    Svdf,
    Add,
    AddInPlace,
    Sub,
    SubInPlace,
    Mul,
    MulInPlace,
    Quantize,
    Pad,
    Mean,
);

/// One case and its tensors: input, filter, bias and `SVDF`'s time weights.
struct Tensors<'a> {
    case: &'a Case,
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
    TensorInfo::unnamed(shape, quant)
}

/// A case's input, filter, bias and output descriptions.
struct Infos {
    x: TensorInfo<i8>,
    w: TensorInfo<i8>,
    b: TensorInfo<i32>,
    y: TensorInfo<i8>,
}

impl Infos {
    fn of(case: &Case) -> Infos {
        const BIAS: &[usize] = &[MAX_CHANNELS];
        Infos {
            x: info(case.x, Some(case.x_quant)),
            w: info(case.w, Some(case.w_quant)),
            b: info(BIAS, None),
            y: info(case.y, Some(case.y_quant)),
        }
    }

    /// The case's bias input, when it has one: a value per output channel.
    fn bias<'a>(&'a self, v: &Tensors<'a>) -> Option<In<'a>> {
        let out_c = *v.case.y.last().unwrap_or(&0);
        v.case.bias.then(|| In::new(&v.b[..out_c], &self.b))
    }
}

/// The view of one checked op: its inputs, then its outputs, kernel scratch and variable
/// tensors.
pub fn view<'v, 'a>(
    inputs: &'v [Option<In<'a>>],
    (outputs, scratch, variables): (&'v mut [Out<'a>], &'v mut [Out<'a>], &'v mut [Out<'a>]),
) -> OpView<'v, 'a> {
    OpView {
        index: 0,
        opcode: "CHECK",
        inputs,
        outputs,
        scratch,
        variables,
    }
}

/// Runs `v`'s case with kernel set `k` into `y` (an `SVDF` twice, stepping `state`).
fn run<K: Kinds>(
    k: &mut K,
    v: &Tensors<'_>,
    y: &mut [i8],
    state: &mut [i8],
) -> Result<(), KernelError> {
    let case = v.case;
    let i = Infos::of(case);
    let (xi, wi, yi) = (&i.x, &i.w, &i.y);
    let bias = i.bias(v);
    if let Options::Svdf(opt, t_shape, s_shape, t_quant, s_quant) = &case.options {
        let ti = info::<i8>(t_shape, Some(*t_quant));
        let si = info::<i8>(s_shape, Some(*s_quant));
        let inputs = [
            Some(In::new(v.x, xi)),
            Some(In::new(v.w, wi)),
            Some(In::new(v.t, &ti)),
            bias,
            Some(In::variable(0, &si)),
        ];
        for _ in 0..2 {
            let mut outputs = [Out::new(&mut *y, yi)];
            let mut variables = [Out::new(&mut *state, &si)];
            k.svdf(view(&inputs, (&mut outputs, &mut [], &mut variables)), opt)?;
        }
        return Ok(());
    }
    let inputs = [Some(In::new(v.x, xi)), Some(In::new(v.w, wi)), bias];
    let mut outputs = [Out::new(y, yi)];
    let op = view(&inputs, (&mut outputs, &mut [], &mut []));
    match &case.options {
        Options::Conv(opt) => k.conv_2d(op, opt),
        Options::Depthwise(opt) => k.depthwise_conv_2d(op, opt),
        Options::Fc(opt) => k.fully_connected(op, opt),
        Options::Svdf(..) => Ok(()),
    }
}

/// `v`'s case, when it is depthwise with a depth multiplier of 1 and an output no larger
/// than its input, run in place by `k`: `buf` starts as the input and ends with the output,
/// with a temporary of `tmp`'s length; `None` for any other case.
fn run_in_place<K: Kinds>(
    k: &mut K,
    v: &Tensors<'_>,
    buf: &mut [i8],
    tmp: &mut [i8],
) -> Option<Result<(), KernelError>> {
    let case = v.case;
    let Options::Depthwise(opt) = &case.options else {
        return None;
    };
    // The buffer spans the input and the output.
    let span = v.x.len().max(case.y.iter().product());
    if opt.depth_multiplier != 1 || buf.len() < span {
        return None;
    }
    let buf = &mut buf[..span];
    const TEMP: &[usize] = &[MAX];
    let (i, ti) = (Infos::of(case), info::<i8>(TEMP, None));
    buf[..v.x.len()].copy_from_slice(v.x);
    let inputs = [
        Some(In::in_place(0, &i.x)),
        Some(In::new(v.w, &i.w)),
        i.bias(v),
    ];
    let mut outputs = [Out::new(buf, &i.y)];
    let mut scratch = [Out::new(tmp, &ti)];
    let op = view(&inputs, (&mut outputs, &mut scratch, &mut []));
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

/// Where two results first differ: the element, and each one's value there (or its error).
pub type Difference = (usize, Result<i8, KernelError>, Result<i8, KernelError>);

impl Mismatch {
    /// Case `case`'s first difference.
    pub fn at(case: usize, (element, reference, optimized): Difference) -> Mismatch {
        Mismatch {
            case,
            element,
            reference,
            optimized,
        }
    }
}

/// The first element where `a` and `b` differ.
pub fn first_difference(a: &[i8], b: &[i8]) -> Option<Difference> {
    let i = a.iter().zip(b).position(|(a, b)| a != b)?;
    Some((i, Ok(a[i]), Ok(b[i])))
}

/// Two sets' results of one case, the reference's first, with their outputs: where they
/// differ, if they do; the case counted in `stats` as refused by both alike, or as having
/// varied outputs.
pub fn compare(
    stats: &mut Stats,
    results: (Result<(), KernelError>, Result<(), KernelError>),
    (a, b): (&[i8], &[i8]),
) -> Option<Difference> {
    let first = |y: &[i8]| y.first().copied().unwrap_or(0);
    match results {
        (Ok(()), Ok(())) => {
            stats.varied += usize::from(a.iter().any(|&v| v != first(a)));
            first_difference(a, b)
        }
        (Err(e0), Err(e1)) if e0 == e1 => {
            stats.refused += 1;
            None
        }
        (r0, r1) => Some((0, r0.map(|()| first(a)), r1.map(|()| first(b)))),
    }
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
            case,
            x: &x[..xl],
            w: &w[..wl],
            b: &b,
            t: &t[..tl],
        };
        let r0 = run(reference, &v, &mut y0[..yl], &mut s0[..sl]);
        let r1 = run(optimized, &v, &mut y1[..yl], &mut s1[..sl]);
        let ran = r0.is_ok();
        // The outputs, then the state's elements (numbered on from the outputs').
        let differ = compare(&mut stats, (r0, r1), (&y0[..yl], &y1[..yl])).or_else(|| {
            let state = ran.then(|| first_difference(&s0[..sl], &s1[..sl]));
            state.flatten().map(|(i, a, b)| (yl + i, a, b))
        });
        // A depthwise case that can run in place: both sets in place (elements numbered
        // on from the state's), equal to each other and to the reference's output out of
        // place.
        let differ = differ.or_else(|| {
            let r0 = run_in_place(reference, &v, &mut in_place.0, &mut temp)?;
            let r1 = run_in_place(optimized, &v, &mut in_place.1, &mut temp)?;
            let ran = r0.is_ok();
            let (b0, b1) = (&in_place.0[..yl], &in_place.1[..yl]);
            let out_of_place = || ran.then(|| first_difference(&y0[..yl], b0)).flatten();
            let differ = compare(&mut Stats::default(), (r0, r1), (b0, b1)).or_else(out_of_place);
            differ.map(|(i, a, b)| (yl + sl + i, a, b))
        });
        if let Some(d) = differ {
            return (stats, Some(Mismatch::at(n, d)));
        }
    }
    (stats, None)
}
