//! The run over models held in one byte array, with slots as a plan would give them.

extern crate std;

use std::string::ToString;

use super::*;

/// A model in one 64-byte arena: tensors are `(id, offset, len)`, ops `(reads, writes)` by
/// tensor number. Views are copies, taken fresh at each call and written back after, so a
/// broken plan (overlapping slots) can be expressed without aliasing references.
struct Fake {
    arena: [u8; 64],
    tensors: &'static [(&'static str, usize, usize)],
    ops: &'static [(&'static [usize], &'static [usize])],
    inputs: &'static [usize],
    outputs: &'static [usize],
    /// `(op, tensor, byte)`: a faulty kernel that, running op `op`, also writes one byte
    /// of another tensor (once).
    stray: Option<(usize, usize, usize)>,
    calls: usize,
}

impl Fake {
    fn new(
        tensors: &'static [(&'static str, usize, usize)],
        ops: &'static [(&'static [usize], &'static [usize])],
        inputs: &'static [usize],
        outputs: &'static [usize],
    ) -> Fake {
        Fake {
            arena: [0; 64],
            tensors,
            ops,
            inputs,
            outputs,
            stray: None,
            calls: 0,
        }
    }

    fn with_views(&mut self, reads: &[usize], writes: &[usize], f: &mut OpFn<'_>) {
        let mut rbuf = [[0u8; 64]; 4];
        let mut wbuf = [[0u8; 64]; 4];
        for (b, &t) in rbuf
            .iter_mut()
            .zip(reads)
            .chain(wbuf.iter_mut().zip(writes))
        {
            let (_, off, len) = self.tensors[t];
            b[..len].copy_from_slice(&self.arena[off..off + len]);
        }
        {
            let mut rviews = rbuf.iter().zip(reads).map(|(b, &t)| {
                let (id, _, len) = self.tensors[t];
                View {
                    id,
                    name: id,
                    bytes: &b[..len],
                    hash: None,
                }
            });
            let rv: [Option<View<&[u8]>>; 4] = core::array::from_fn(|_| rviews.next());
            let mut wviews = wbuf.iter_mut().zip(writes).map(|(b, &t)| {
                let (id, _, len) = self.tensors[t];
                View {
                    id,
                    name: id,
                    bytes: &mut b[..len],
                    hash: None,
                }
            });
            let mut wv: [Option<View<&mut [u8]>>; 4] = core::array::from_fn(|_| wviews.next());
            let r: [View<&[u8]>; 4] = rv.map(|v| {
                v.unwrap_or(View {
                    id: "",
                    name: "",
                    bytes: &[],
                    hash: None,
                })
            });
            let mut w: [View<&mut [u8]>; 4] = core::array::from_fn(|i| {
                wv[i].take().unwrap_or(View {
                    id: "",
                    name: "",
                    bytes: &mut [],
                    hash: None,
                })
            });
            f(&r[..reads.len()], &mut w[..writes.len()]);
        }
        for (b, &t) in wbuf.iter().zip(writes) {
            let (_, off, len) = self.tensors[t];
            self.arena[off..off + len].copy_from_slice(&b[..len]);
        }
    }
}

impl Subject for Fake {
    fn model(&self) -> &'static str {
        "fake"
    }
    fn ops(&self) -> usize {
        self.ops.len()
    }
    fn opcode(&self, _k: usize) -> &'static str {
        "ADD"
    }
    fn op(&mut self, k: usize, f: &mut OpFn<'_>) {
        self.calls += 1;
        let (reads, writes) = self.ops[k];
        self.with_views(reads, writes, f);
        if let Some((op, t, byte)) = self.stray
            && op == k
        {
            self.arena[self.tensors[t].1 + byte] ^= 0xff;
            self.stray = None;
        }
    }
    fn start(&mut self, f: &mut FillFn<'_>) {
        let inputs = self.inputs;
        self.with_views(&[], inputs, &mut |_, w| f(w));
    }
    fn end(&mut self, f: &mut CheckFn<'_>) {
        let outputs = self.outputs;
        self.with_views(outputs, &[], &mut |r, _| f(r));
    }
}

/// Runs `m`, which must fail on an overwritten tensor: the failure, and the offset of the
/// first wrong byte in the tensor.
fn overwritten(m: &mut Fake) -> (Failure, usize) {
    let f = run(m).unwrap_err();
    let byte = match f.fault {
        Fault::Overwritten { byte, .. } => byte,
        _ => panic!("not an overwritten tensor: {f:?}"),
    };
    (f, byte)
}

/// in -> a -> b -> out, a chain like hello_world's.
const CHAIN_OPS: &[(&[usize], &[usize])] = &[(&[0], &[1]), (&[1], &[2]), (&[2], &[3])];

#[test]
fn a_valid_plan_passes_and_reuses_bytes_of_dead_tensors() {
    // `out` reuses `in`'s bytes and `b` reuses `in`'s too: both are dead by then.
    static T: &[(&str, usize, usize)] =
        &[("in", 0, 8), ("a", 16, 16), ("b", 0, 16), ("out", 16, 4)];
    let mut m = Fake::new(T, CHAIN_OPS, &[0], &[3]);
    let s = run(&mut m).unwrap();
    assert_eq!(s.ops, 3);
    // Each op's input is checked twice, the output once at the end.
    assert_eq!(s.checks, 7);
    assert_eq!(s.bytes_filled, 8 + 16 + 16 + 4);
    assert_eq!(m.calls, 6, "two fresh views per op");
    assert_eq!(first_mismatch("out", &m.arena[16..20]), None);
}

#[test]
fn an_output_on_a_live_input_of_the_same_op_is_caught() {
    // `b` (written by op 1) placed on `a` (read by op 1).
    static T: &[(&str, usize, usize)] =
        &[("in", 0, 8), ("a", 16, 16), ("b", 20, 16), ("out", 0, 4)];
    let (f, byte) = overwritten(&mut Fake::new(T, CHAIN_OPS, &[0], &[3]));
    assert_eq!(
        (f.op, f.tensor, f.moment, byte),
        (1, "a", Moment::AfterWrites, 4)
    );
    let text = f.to_string();
    assert!(
        text.starts_with("model fake op 1 (ADD): live tensor a (a) was overwritten at byte 4"),
        "{text}"
    );
}

#[test]
fn an_output_on_a_tensor_read_later_is_caught_at_its_reader() {
    // x is read by op 2; op 1 writes y over it.
    static T: &[(&str, usize, usize)] = &[("in", 0, 4), ("x", 8, 8), ("y", 12, 4), ("out", 32, 4)];
    static OPS: &[(&[usize], &[usize])] = &[(&[0], &[1]), (&[0], &[2]), (&[1, 2], &[3])];
    let (f, byte) = overwritten(&mut Fake::new(T, OPS, &[0], &[3]));
    assert_eq!(
        (f.op, f.tensor, f.moment, byte),
        (2, "x", Moment::BeforeOp, 4)
    );
}

#[test]
fn a_model_output_clobbered_after_it_was_written_is_caught_at_the_end() {
    static T: &[(&str, usize, usize)] = &[("in", 0, 4), ("out", 8, 4), ("tmp", 10, 4)];
    static OPS: &[(&[usize], &[usize])] = &[(&[0], &[1]), (&[0], &[2])];
    let mut m = Fake::new(T, OPS, &[0], &[1]);
    let f = run(&mut m).unwrap_err();
    assert_eq!(
        (f.op, f.opcode, f.tensor, f.moment),
        (2, "end", "out", Moment::AtEnd)
    );
}

#[test]
fn a_stray_kernel_write_is_caught_even_on_a_valid_plan() {
    static T: &[(&str, usize, usize)] =
        &[("in", 0, 8), ("a", 16, 16), ("b", 40, 16), ("out", 0, 4)];
    let mut m = Fake::new(T, CHAIN_OPS, &[0], &[3]);
    m.stray = Some((0, 1, 9));
    let (f, byte) = overwritten(&mut m);
    assert_eq!((f.op, f.tensor, byte), (1, "a", 9));
}

#[test]
fn patterns_differ_between_tensors_and_offsets() {
    let a: [u8; 32] = core::array::from_fn(|i| pattern("7", i));
    let b: [u8; 32] = core::array::from_fn(|i| pattern("8", i));
    assert!(a.iter().zip(&b).filter(|(x, y)| x == y).count() < 4);
    let mut filled = [0u8; 32];
    fill("7", &mut filled);
    assert_eq!(filled, a);
    assert_eq!(first_mismatch("7", &a), None);
    assert_eq!(first_mismatch("8", &a).map(|m| m.0), Some(0));
    // Not constant along a tensor either.
    assert!(a.windows(2).any(|w| w[0] != w[1]));
}

#[test]
fn constants_are_checked_against_their_blob_hash() {
    static T: &[(&str, usize, usize)] =
        &[("in", 0, 8), ("a", 16, 16), ("b", 40, 16), ("out", 0, 4)];
    let mut m = Fake::new(T, CHAIN_OPS, &[0], &[3]);
    m.arena[60..64].copy_from_slice(&[1, 2, 3, 4]);
    fn weights(m: &Fake, hash: u32) -> View<&[u8]> {
        View {
            id: "w",
            name: "weights",
            bytes: &m.arena[60..64],
            hash: Some(hash),
        }
    }
    let mut sum = Summary::default();
    let at = Place {
        model: "fake",
        op: 0,
        opcode: "FULLY_CONNECTED",
    };
    let good = fnv1a32(&[1, 2, 3, 4]);
    assert_eq!(
        check(&[weights(&m, good)], at, Moment::BeforeOp, &mut sum),
        None
    );
    m.arena[62] = 9;
    let f = check(&[weights(&m, good)], at, Moment::BeforeOp, &mut sum).unwrap();
    assert_eq!(
        f.fault,
        Fault::WeightsChanged {
            expected: good,
            found: fnv1a32(&[1, 2, 9, 4])
        }
    );
    assert!(
        f.to_string()
            .contains("constant tensor w (weights) does not hold its weights"),
        "{f}"
    );
    assert_eq!(sum.checks, 2);
}
