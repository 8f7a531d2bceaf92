//! Random one-op cases for the firmware's check that the optimized kernel set gives the
//! reference set's bytes on the board: `CONV_2D`, `DEPTHWISE_CONV_2D`, `FULLY_CONNECTED` and
//! `SVDF` (int8 state, two steps) with channel counts that are not multiples of the vector widths, strides, dilations,
//! SAME/VALID/explicit padding, per-channel and per-tensor filters, extreme zero points,
//! multipliers that saturate, tiny multipliers under accumulators past 2^30, every fused
//! activation, with and without bias. Written as
//! `static` shapes and quantisation (a view's are `&'static`), the tensors' values drawn at
//! run time from each case's seed.

use std::fmt::Write as _;

use planner_kernels::golden::SplitMix64;

/// The golden scripts' SplitMix64 (`planner_kernels::golden`), drawing the cases.
pub struct Rng(SplitMix64);

impl Rng {
    /// The stream at `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64(seed))
    }

    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    pub fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[(self.next() % v.len() as u64) as usize]
    }

    /// A scale between `lo` and `hi`, log-uniform.
    pub fn scale(&mut self, lo: f64, hi: f64) -> f32 {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        (lo.ln() + u * (hi.ln() - lo.ln())).exp() as f32
    }

    /// A zero point, an extreme one a quarter of the time.
    pub fn zero(&mut self) -> i64 {
        match self.next() % 8 {
            0 => -128,
            1 => 127,
            _ => self.range(-128, 127),
        }
    }
}

/// Largest input, filter, output and channel counts of any case (the firmware's buffers).
pub const MAX_INPUT: usize = 4096;
pub const MAX_FILTER: usize = 4096;
pub const MAX_OUTPUT: usize = 4096;
pub const MAX_CHANNELS: usize = 64;

/// The output size along one axis for `padding` (`same`, `valid` or pads `(before, after)`).
fn out_size(
    input: i64,
    filter: i64,
    stride: i64,
    dilation: i64,
    pads: Option<(i64, i64)>,
    same: bool,
) -> i64 {
    let extent = (filter - 1) * dilation + 1;
    match (same, pads) {
        (true, _) => (input + stride - 1) / stride,
        (false, Some((b, a))) => {
            let padded = input + b + a;
            if padded < extent {
                0
            } else {
                (padded - extent) / stride + 1
            }
        }
        (false, None) => {
            if input < extent {
                0
            } else {
                (input - extent) / stride + 1
            }
        }
    }
}

pub fn list<T: std::fmt::Display>(v: &[T]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn floats(v: &[f32]) -> String {
    v.iter()
        .map(|x| format!("f32::from_bits(0x{:08x})", x.to_bits()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Case `n`'s statics, appended to `items`: each shape as `<name><n>: [usize; _]`, each
/// one-scale quantisation as `<name>S<n>: [f32; 1]` and `<name>Z<n>: [i64; 1]`. Returns
/// the `Quant` expression of each quantisation, in order.
pub fn statics(
    items: &mut String,
    n: usize,
    shapes: &[(&str, &[i64])],
    quants: &[(&str, (f32, i64))],
) -> Vec<String> {
    for (name, v) in shapes {
        let _ = writeln!(
            items,
            "static {name}{n}: [usize; {}] = [{}];",
            v.len(),
            list(v)
        );
    }
    let mut exprs = Vec::new();
    for (q, (scale, zero)) in quants {
        let _ = writeln!(
            items,
            "static {q}S{n}: [f32; 1] = [{}];\nstatic {q}Z{n}: [i64; 1] = [{zero}];",
            floats(&[*scale])
        );
        exprs.push(format!(
            "Quant {{ scale: &{q}S{n}, zero_point: &{q}Z{n}, axis: 0 }}"
        ));
    }
    exprs
}

/// A case's input, filter and output shapes, output channels and options.
type Drawn = (Vec<i64>, Vec<i64>, Vec<i64>, i64, String);

/// A `CONV_2D` (`kind` 0) or `DEPTHWISE_CONV_2D` case, or `None` when the drawn window
/// leaves no output pixel.
fn conv_case(rng: &mut Rng, kind: u8, act: &str) -> Option<Drawn> {
    let h = rng.range(1, 12);
    let w = rng.range(1, 12);
    let fh = rng.pick(&[1, 1, 2, 3, 3, 5]).min(h + 2);
    let fw = rng.pick(&[1, 1, 2, 3, 3, 5]).min(w + 2);
    let (sh, sw) = (rng.range(1, 3), rng.range(1, 3));
    let (dh, dw) = if rng.next().is_multiple_of(4) {
        (rng.range(1, 2), rng.range(1, 2))
    } else {
        (1, 1)
    };
    let mode = rng.range(0, 2);
    let pads = (mode == 2).then(|| {
        [
            rng.range(0, 2),
            rng.range(0, 2),
            rng.range(0, 2),
            rng.range(0, 2),
        ]
    });
    let oh = out_size(h, fh, sh, dh, pads.map(|p| (p[0], p[1])), mode == 0);
    let ow = out_size(w, fw, sw, dw, pads.map(|p| (p[2], p[3])), mode == 0);
    if oh < 1 || ow < 1 {
        return None;
    }
    let padding = ["Same", "Valid", "Explicit"][mode as usize];
    let pads = match pads {
        Some(p) => format!(
            "match o::Dims::new(&[{}]) {{ Some(d) => d, None => o::Dims::EMPTY }}",
            list(&p)
        ),
        None => "o::Dims::EMPTY".to_string(),
    };
    if kind == 0 {
        let groups = if rng.next().is_multiple_of(6) { 2 } else { 1 };
        let fc = rng.range(1, 24);
        let cin = fc * groups;
        let oc = groups * rng.range(1, 24 / groups);
        Some((
            vec![1, h, w, cin],
            vec![oc, fh, fw, fc],
            vec![1, oh, ow, oc],
            oc,
            format!(
                "crate::selfcheck::Options::Conv(o::Conv2dOptions {{ padding: o::Padding::{padding}, pads: {pads}, stride_w: {sw}, stride_h: {sh}, dilation_w: {dw}, dilation_h: {dh}, activation: o::Activation::{act} }})"
            ),
        ))
    } else {
        let cin = rng.range(1, 24);
        let mult = rng.pick(&[1, 1, 1, 2, 3]);
        let oc = cin * mult;
        Some((
            vec![1, h, w, cin],
            vec![1, fh, fw, oc],
            vec![1, oh, ow, oc],
            oc,
            format!(
                "crate::selfcheck::Options::Depthwise(o::DepthwiseConv2dOptions {{ padding: o::Padding::{padding}, pads: {pads}, stride_w: {sw}, stride_h: {sh}, depth_multiplier: {mult}, dilation_w: {dw}, dilation_h: {dh}, activation: o::Activation::{act} }})"
            ),
        ))
    }
}

/// `count` cases drawn from `seed`, as Rust: `pub static CASES: &[crate::selfcheck::Case]`.
pub fn rust(seed: u64, count: usize) -> String {
    let mut rng = Rng::new(seed);
    let mut s = String::from("// @generated by bench-target's build.rs (build/cases.rs)\n");
    let mut items = String::new();
    let mut made = 0;
    while made < count {
        let kind = rng.pick(&[0u8, 0, 1, 1, 2, 3]);
        let act = rng.pick(&["None", "Relu", "Relu6", "ReluN1To1"]);
        let (xs, ws, ys, out_c, opts);
        // SVDF's time weights and state: shapes and quantisation (statics `T`, `S`, `TQ`).
        let mut svdf = None;
        match kind {
            3 => {
                let batches = rng.range(1, 2);
                let (short, long) = (rng.range(1, 20), rng.range(1, 120));
                let input = rng.pick(&[short, long]);
                // Any memory, or the lengths the DSP path's time rows unroll.
                let any = rng.range(1, 20);
                let memory = rng.pick(&[any, any, 8, 16, 32]);
                let (units, rank) = (rng.range(1, 24), rng.range(1, 2));
                let filters = units * rank;
                xs = vec![batches, input];
                ws = vec![filters, input];
                ys = vec![batches, units];
                out_c = units;
                svdf = Some((vec![filters, memory], vec![batches, filters * memory]));
                opts = format!(
                    "crate::selfcheck::Options::Svdf(o::SvdfOptions {{ rank: {rank}, activation: o::Activation::None, asymmetric_quantize_inputs: false }}, &T{{n}}, &S{{n}}, Quant {{ scale: &TS{{n}}, zero_point: &TZ{{n}}, axis: 0 }}, Quant {{ scale: &SS{{n}}, zero_point: &SZ{{n}}, axis: 0 }})"
                );
            }
            2 => {
                let batches = rng.range(1, 3);
                let (short, long) = (rng.range(1, 40), rng.range(1, 400));
                let k = rng.pick(&[short, long]);
                let oc = rng.range(1, 40);
                xs = vec![batches, k];
                ws = vec![oc, k];
                ys = vec![batches, oc];
                out_c = oc;
                opts = format!(
                    "crate::selfcheck::Options::Fc(o::FullyConnectedOptions {{ activation: o::Activation::{act}, weights_format: o::WeightsFormat::Default, keep_num_dims: false, asymmetric_quantize_inputs: false }})"
                );
            }
            _ => match conv_case(&mut rng, kind, act) {
                Some(case) => (xs, ws, ys, out_c, opts) = case,
                None => continue,
            },
        }
        let prod = |v: &[i64]| v.iter().product::<i64>() as usize;
        if prod(&xs) > MAX_INPUT
            || prod(&ws) > MAX_FILTER
            || prod(&ys) > MAX_OUTPUT
            || out_c as usize > MAX_CHANNELS
        {
            continue;
        }
        let in_scale = rng.scale(0.002, 0.2);
        let per_channel = kind != 3 && rng.next().is_multiple_of(2);
        let filters: Vec<f32> = (0..if per_channel { out_c } else { 1 })
            .map(|_| rng.scale(0.001, 0.05))
            .collect();
        // A small output scale saturates; a large one leaves the outputs near the zero point.
        let mut out_scale = rng.scale(0.001, 0.5);
        let (xz, yz) = (rng.zero(), rng.zero());
        let bias = !rng.next().is_multiple_of(5);
        let extreme_bias = rng.next().is_multiple_of(6);
        if extreme_bias && rng.next().is_multiple_of(2) {
            // Multipliers of 2^-23 to 2^-26: accumulators past 2^30 (whose double
            // overflows int32) still land inside int8, not at its bounds.
            let power = 23 + (rng.next() % 4) as i32;
            out_scale = in_scale * filters[0] * 2f32.powi(power);
        }
        let axis = if kind == 1 { 3 } else { 0 };
        let n = made;
        let opts = opts.replace("{n}", &n.to_string());
        if let Some((t, st)) = &svdf {
            let (t_scale, s_scale) = (rng.scale(0.001, 0.05), rng.scale(0.005, 0.5));
            let _ = writeln!(
                items,
                "static T{n}: [usize; 2] = [{}];\nstatic S{n}: [usize; 2] = [{}];\nstatic TS{n}: [f32; 1] = [{}];\nstatic TZ{n}: [i64; 1] = [0];\nstatic SS{n}: [f32; 1] = [{}];\nstatic SZ{n}: [i64; 1] = [{}];",
                list(t),
                list(st),
                floats(&[t_scale]),
                floats(&[s_scale]),
                rng.zero(),
            );
        }
        let _ = writeln!(
            items,
            "static X{n}: [usize; {}] = [{}];\nstatic W{n}: [usize; {}] = [{}];\nstatic Y{n}: [usize; {}] = [{}];\nstatic WS{n}: [f32; {}] = [{}];\nstatic WZ{n}: [i64; {}] = [{}];",
            xs.len(),
            list(&xs),
            ws.len(),
            list(&ws),
            ys.len(),
            list(&ys),
            filters.len(),
            floats(&filters),
            filters.len(),
            list(&vec![0; filters.len()]),
        );
        let _ = writeln!(
            items,
            "static XS{n}: [f32; 1] = [{}];\nstatic YS{n}: [f32; 1] = [{}];\nstatic XZ{n}: [i64; 1] = [{xz}];\nstatic YZ{n}: [i64; 1] = [{yz}];",
            floats(&[in_scale]),
            floats(&[out_scale]),
        );
        let _ = writeln!(
            s,
            "    crate::selfcheck::Case {{ x: &X{n}, w: &W{n}, y: &Y{n}, x_quant: Quant {{ scale: &XS{n}, zero_point: &XZ{n}, axis: 0 }}, w_quant: Quant {{ scale: &WS{n}, zero_point: &WZ{n}, axis: {axis} }}, y_quant: Quant {{ scale: &YS{n}, zero_point: &YZ{n}, axis: 0 }}, bias: {bias}, extreme_bias: {extreme_bias}, seed: {}, options: {opts} }},",
            rng.next()
        );
        made += 1;
    }
    format!(
        "{items}\nuse planner::rt::options as o;\nuse planner::rt::Quant;\n\n/// The cases.\npub static CASES: &[crate::selfcheck::Case] = &[\n{s}];\n"
    )
}
