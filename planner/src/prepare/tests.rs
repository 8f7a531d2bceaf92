//! The rules on hand-built graphs: which ops get a constant and kernel scratch, where they
//! go, their names and values.

use super::*;
use crate::graph::{IoName, Quantization};
use crate::rt::options::{Conv2dOptions, DepthwiseConv2dOptions, FullyConnectedOptions};

fn quant(scale: &[f32], zero_point: &[i64]) -> Option<Quantization> {
    Some(Quantization {
        scale: scale.to_vec(),
        zero_point: zero_point.to_vec(),
        axis: 0,
    })
}

fn tensor(id: &str, dtype: DType, shape: &[u64], data: Option<Vec<u8>>) -> Tensor {
    Tensor {
        name: format!("{id} name"),
        ..Tensor::fixture(id, dtype, shape, data)
    }
}

fn i8_data(values: &[i8]) -> Option<Vec<u8>> {
    Some(values.iter().map(|&v| v as u8).collect())
}

fn i32_data(values: &[i32]) -> Option<Vec<u8>> {
    Some(values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

fn conv(stride: i32) -> OpOptions {
    OpOptions::Conv2d(Conv2dOptions {
        stride_w: stride,
        stride_h: stride,
        dilation_w: 1,
        dilation_h: 1,
        ..Default::default()
    })
}

/// `x [1,4,4,2] -> CONV_2D 3x3 (w, b) -> a [1,4,4,2] -> DEPTHWISE 2x2 (dw, no bias) -> d
/// [1,4,4,2] -> CONV_2D 1x1 stride 1 (pw) -> e -> FULLY_CONNECTED (fw, fb) -> y [1,3]`,
/// int8 with per-channel conv scales, input zero point -3.
fn graph() -> Graph {
    let act = |id: &str, shape: &[u64]| {
        let mut t = tensor(id, DType::I8, shape, None);
        t.quantization = quant(&[0.5], &[-3]);
        t
    };
    let weights = |id: &str, shape: &[u64], scales: &[f32]| {
        let n: u64 = shape.iter().product();
        let values: Vec<i8> = (0..n).map(|i| (i as i64 * 7 % 23 - 11) as i8).collect();
        let mut t = tensor(id, DType::I8, shape, i8_data(&values));
        t.quantization = quant(scales, &vec![0; scales.len()]);
        t
    };
    let tensors = vec![
        act("x", &[1, 4, 4, 2]),                          // 0
        weights("w", &[2, 3, 3, 2], &[0.25, 0.125]),      // 1
        tensor("b", DType::I32, &[2], i32_data(&[100, -7])), // 2
        act("a", &[1, 4, 4, 2]),                          // 3
        weights("dw", &[1, 2, 2, 2], &[0.75]),            // 4
        act("d", &[1, 4, 4, 2]),                          // 5
        weights("pw", &[2, 1, 1, 2], &[0.5, 0.5]),        // 6
        act("e", &[1, 4, 4, 2]),                          // 7
        weights("fw", &[3, 32], &[0.0625]),               // 8
        tensor("fb", DType::I32, &[3], i32_data(&[1, 2, 3])), // 9
        act("y", &[1, 3]),                                // 10
    ];
    Graph {
        name: "g".into(),
        tensors,
        ops: vec![
            Op::fixture("CONV_2D", &[Some(0), Some(1), Some(2)], 3, conv(1)),
            Op::fixture(
                "DEPTHWISE_CONV_2D",
                &[Some(3), Some(4)],
                5,
                OpOptions::DepthwiseConv2d(DepthwiseConv2dOptions::default()),
            ),
            Op::fixture("CONV_2D", &[Some(5), Some(6), None], 7, conv(1)),
            Op::fixture(
                "FULLY_CONNECTED",
                &[Some(7), Some(8), Some(9)],
                10,
                OpOptions::FullyConnected(FullyConnectedOptions::default()),
            ),
        ],
        inputs: vec![IoName {
            name: "x".into(),
            tensor: TensorIndex(0),
        }],
        outputs: vec![IoName {
            name: "y".into(),
            tensor: TensorIndex(10),
        }],
        ..Graph::default()
    }
}

fn prepared(mut g: Graph) -> Graph {
    apply(&mut g, KernelSet::Optimized).unwrap();
    g.validate().unwrap();
    g
}

fn values(t: &Tensor) -> Vec<i32> {
    t.data
        .as_ref()
        .unwrap()
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn every_int8_kind_gets_its_constant_as_input_3() {
    let g = prepared(graph());
    assert_eq!(g.kernels, KernelSet::Optimized);
    assert_eq!(g.prepared.len(), 4);
    for (k, (id, channels)) in [("a", 2), ("d", 2), ("e", 2), ("y", 3)].into_iter().enumerate() {
        let op = &g.ops[k];
        assert_eq!(op.inputs.len(), 4, "op {k}");
        let c = g.tensor(op.inputs[3].unwrap());
        assert_eq!(c.id, format!("{id}{CONSTANT_SUFFIX}"));
        assert_eq!(c.name, format!("{id} name{CONSTANT_SUFFIX}"));
        assert_eq!((c.dtype, c.kind), (DType::I32, TensorKind::Constant));
        assert_eq!(c.shape, vec![3, channels]);
        assert_eq!(c.size, 12 * channels);
        let p = g.prepared_of(op).unwrap();
        assert_eq!(p.constant, Some((PreparedLayout::RequantV1, op.inputs[3].unwrap())));
    }
    // The depthwise op had no bias: input 2 is left out.
    assert_eq!(g.ops[1].inputs[2], None);
}

/// The constants against sums written out by hand from the filters' formula.
#[test]
fn constants_hold_effective_bias_multiplier_and_shift() {
    let g = prepared(graph());
    let w = |i: u64| (i as i64 * 7 % 23 - 11) as i32;
    let c0 = values(g.tensor(g.ops[0].inputs[3].unwrap()));
    // CONV_2D: channel c is elements 18c..18c+18.
    let sum = |c: u64, n: u64| (c * n..(c + 1) * n).map(w).sum::<i32>();
    assert_eq!(c0[0], 100 + 3 * sum(0, 18));
    assert_eq!(c0[1], -7 + 3 * sum(1, 18));
    // 0.5 · 0.25 / 0.5 = 2^-2 and 0.5 · 0.125 / 0.5 = 2^-3.
    assert_eq!(&c0[2..], &[1 << 30, 1 << 30, -1, -2]);
    // DEPTHWISE_CONV_2D [1, 2, 2, 2]: channel c is elements c, c + 2, c + 4, c + 6.
    let d = values(g.tensor(g.ops[1].inputs[3].unwrap()));
    let taps = |c: u64| [c, c + 2, c + 4, c + 6].into_iter().map(w).sum::<i32>();
    assert_eq!(&d[..2], &[3 * taps(0), 3 * taps(1)]);
    // One scale for both channels: 0.75 = 0.75 · 2^0.
    assert_eq!(&d[2..], &[3 << 29, 3 << 29, 0, 0]);
    // FULLY_CONNECTED [3, 32].
    let f = values(g.tensor(g.ops[3].inputs[3].unwrap()));
    assert_eq!(&f[..3], &[1 + 3 * sum(0, 32), 2 + 3 * sum(1, 32), 3 + 3 * sum(2, 32)]);
    assert_eq!(&f[3..], &[1 << 30, 1 << 30, 1 << 30, -3, -3, -3]);
}

#[test]
fn kernel_scratch_for_im2col_convolutions_only() {
    let g = prepared(graph());
    // 3x3 over 2 channels: four rows of 3 · 3 · 2 bytes, first scratch of the op.
    let s = g.tensor(g.ops[0].scratch[0]);
    assert_eq!(s.id, format!("a{SCRATCH_SUFFIX}"));
    assert_eq!((s.size, s.dtype, s.kind), (72, DType::I8, TensorKind::Activation));
    assert_eq!(s.align_hint, Some(4));
    // The 1x1 convolution (a GEMM over the input pixels) and the other kinds get none.
    assert!(g.ops[1..].iter().all(|o| o.scratch.is_empty()));
    assert_eq!(kernel_scratch(&g, KernelSet::Optimized), vec![(0, 72)]);
    assert_eq!(kernel_scratch(&graph(), KernelSet::Optimized), vec![(0, 72)]);
    assert!(kernel_scratch(&g, KernelSet::Reference).is_empty());
    // A stride of 2 keeps the 1x1 convolution a GEMM (over every other pixel).
    let mut strided = graph();
    strided.ops[2].options = conv(2);
    assert_eq!(kernel_scratch(&strided, KernelSet::Optimized), vec![(0, 72)]);
    // Explicit padding makes it read outside the image: four rows of its 2 channels.
    let mut padded = graph();
    padded.ops[2].options = OpOptions::Conv2d(Conv2dOptions {
        padding: Padding::Explicit,
        pads: crate::rt::options::Dims::new(&[1, 1, 0, 0]).unwrap(),
        ..Default::default()
    });
    assert_eq!(kernel_scratch(&padded, KernelSet::Optimized), vec![(0, 72), (2, 8)]);
}

#[test]
fn ops_whose_operands_do_not_fit_are_left_alone() {
    let mut g = graph();
    // A non-zero filter zero point, a shuffled FC, an int16 activation, a variable bias.
    g.tensors[1].quantization = quant(&[0.25, 0.125], &[0, 1]);
    g.ops[3].options = OpOptions::FullyConnected(FullyConnectedOptions {
        weights_format: crate::rt::options::WeightsFormat::Shuffled4x16Int8,
        ..Default::default()
    });
    g.tensors[7].dtype = DType::I16;
    g.tensors[7].size *= 2;
    let g = prepared(g);
    let constants: Vec<bool> = g.ops.iter().map(|o| o.inputs.len() == 4).collect();
    assert_eq!(constants, [false, true, false, false]);
    // The first convolution still gets its kernel scratch (its tensors are int8).
    assert_eq!(g.ops[0].scratch.len(), 1);
    // Without typed options (an inline graph) nothing is prepared.
    let mut untyped = graph();
    for op in &mut untyped.ops {
        op.options = OpOptions::None;
    }
    let untyped = prepared(untyped);
    assert!(untyped.prepared.is_empty());
    assert_eq!(untyped.tensors.len(), graph().tensors.len());
}

#[test]
fn names_stay_unique_and_preparing_twice_changes_nothing() {
    let mut g = graph();
    g.tensors.push(tensor("a/requant", DType::I8, &[1], None));
    let g = prepared(g);
    assert_eq!(g.tensor(g.ops[0].inputs[3].unwrap()).id, "a/requant_1");
    assert_eq!(g.tensor(g.ops[0].inputs[3].unwrap()).name, "a name/requant_1");
    let mut again = g.clone();
    apply(&mut again, KernelSet::Optimized).unwrap();
    assert_eq!(again, g);
    let mut reference = graph();
    apply(&mut reference, KernelSet::Reference).unwrap();
    assert_eq!(reference, graph());
}
