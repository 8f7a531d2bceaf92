//! A canary run: proof, on the target's real memory, that a memory plan never lets one live
//! tensor overwrite another, whatever the kernels.
//!
//! No kernel runs. Instead, op by op in execution order:
//!
//! 1. every tensor the op reads must still hold the pattern its producer wrote (a model
//!    input, state, or a tensor no op produces is filled when its life starts);
//! 2. the op's outputs and scratch are filled with their own pattern, derived from the
//!    tensor's id, so no two tensors write the same bytes;
//! 3. every tensor the op reads is checked again, through a fresh view of the op, so an
//!    output placed on a live input of the same op is caught too.
//!
//! At the end the model's outputs must hold their patterns. A tensor is read by the last op
//! of its life, so any write to bytes of a live tensor by another tensor shows at its next
//! reader, with the op and the tensor named.
//!
//! Constant inputs (weights) are not filled: each carries the hash of the bytes the plan's
//! blob gives it ([`fnv1a32`]), checked at every op that reads it, so weights that did not
//! reach the board intact, or a write into a staged copy, are caught too.
//!
//! `no_std`, no allocation, no `unsafe`: a [`Subject`] hands the run byte views of each op's
//! tensors (for `include_model!` models, built from the generated per-op views).

#![no_std]
#![deny(missing_docs)]

use core::fmt;

/// One tensor as an op sees it: its id and name in the plan, and its bytes.
#[derive(Debug)]
pub struct View<B> {
    /// The tensor's id in the plan.
    pub id: &'static str,
    /// The tensor's name in the model.
    pub name: &'static str,
    /// Its bytes in its arena.
    pub bytes: B,
    /// For a constant the run reads but never fills: the [`fnv1a32`] of the bytes it must
    /// hold. `None`: the tensor holds its pattern.
    pub hash: Option<u32>,
}

/// FNV-1a, 32-bit, of `bytes`: how a constant's expected content is given.
pub fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// Shared views of the tensors an op reads.
pub type Reads<'a> = [View<&'a [u8]>];
/// Mutable views of the tensors an op writes.
pub type Writes<'a> = [View<&'a mut [u8]>];
/// What [`Subject::op`] calls: the op's reads and writes.
pub type OpFn<'f> = dyn FnMut(&Reads<'_>, &mut Writes<'_>) + 'f;
/// What [`Subject::start`] and [`Subject::born`] call: tensors to fill.
pub type FillFn<'f> = dyn FnMut(&mut Writes<'_>) + 'f;
/// What [`Subject::end`] calls: tensors to check.
pub type CheckFn<'f> = dyn FnMut(&Reads<'_>) + 'f;

/// What the canary run needs from a model.
pub trait Subject {
    /// The model's name, for messages.
    fn model(&self) -> &'static str;
    /// Number of operators.
    fn ops(&self) -> usize;
    /// Op `k`'s name.
    fn opcode(&self, k: usize) -> &'static str;
    /// Calls `f` with op `k`'s tensors: the ones it reads, and the ones it writes (outputs,
    /// then scratch). A tensor that is both (an in-place update) is only written. The run
    /// calls it twice per op (fill, then check again), each time with fresh views.
    fn op(&mut self, k: usize, f: &mut OpFn<'_>);
    /// Calls `f` with the tensors whose life starts before op 0 without a producer: model
    /// inputs and whole-run state (what the application writes before running the model).
    fn start(&mut self, f: &mut FillFn<'_>);
    /// Calls `f` with the tensors whose life starts at op `k` (`k > 0`) though no op
    /// produces them, so they get their pattern there. None in a well-formed model.
    fn born(&mut self, k: usize, f: &mut FillFn<'_>) {
        let _ = (k, f);
    }
    /// Calls `f` with the model's outputs after the last op.
    fn end(&mut self, f: &mut CheckFn<'_>);
}

/// The canary byte at offset `i` of the tensor `id`: a hash of both, so that two tensors
/// sharing bytes almost surely disagree on every one of them.
pub fn pattern(id: &str, i: usize) -> u8 {
    mix(seed(id) ^ (i as u32).wrapping_mul(0x9e37_79b9))
}

fn seed(id: &str) -> u32 {
    // FNV-1a over the id.
    id.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

fn mix(mut x: u32) -> u8 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x as u8
}

/// Fills `bytes` with the pattern of `id`.
pub fn fill(id: &str, bytes: &mut [u8]) {
    let s = seed(id);
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = mix(s ^ (i as u32).wrapping_mul(0x9e37_79b9));
    }
}

/// The first byte of `bytes` that does not hold the pattern of `id`: `(offset, expected,
/// found)`.
pub fn first_mismatch(id: &str, bytes: &[u8]) -> Option<(usize, u8, u8)> {
    let s = seed(id);
    bytes.iter().enumerate().find_map(|(i, &found)| {
        let expected = mix(s ^ (i as u32).wrapping_mul(0x9e37_79b9));
        (found != expected).then_some((i, expected, found))
    })
}

/// When a clobbered tensor was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// Before op `op` ran: an earlier op's output or scratch wrote over it.
    BeforeOp,
    /// After op `op` wrote its outputs and scratch: one of them shares its bytes.
    AfterWrites,
    /// After the last op, checking the model's outputs.
    AtEnd,
}

/// A live tensor that did not hold its pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The model.
    pub model: &'static str,
    /// The op reading the tensor (for [`Moment::AtEnd`], the number of ops).
    pub op: usize,
    /// That op's name (`"end"` after the last op).
    pub opcode: &'static str,
    /// The clobbered tensor's id.
    pub tensor: &'static str,
    /// Its name in the model.
    pub name: &'static str,
    /// When it was found.
    pub moment: Moment,
    /// What was wrong.
    pub fault: Fault,
}

/// What a [`Failure`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// A live tensor's byte differs from its pattern.
    Overwritten {
        /// The first wrong byte's offset in the tensor.
        byte: usize,
        /// The pattern's byte there.
        expected: u8,
        /// The byte found.
        found: u8,
    },
    /// A constant's bytes do not hash to its blob's.
    WeightsChanged {
        /// The hash of the blob's bytes for it.
        expected: u32,
        /// The hash of the bytes found.
        found: u32,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "model {} op {} ({}): ", self.model, self.op, self.opcode)?;
        match self.fault {
            Fault::Overwritten {
                byte,
                expected,
                found,
            } => {
                let when = match self.moment {
                    Moment::BeforeOp => "before the op ran: an earlier op wrote over it",
                    Moment::AfterWrites => {
                        "after the op wrote its outputs: one of them shares its bytes"
                    }
                    Moment::AtEnd => "after the last op: a later op wrote over this model output",
                };
                write!(
                    f,
                    "live tensor {} ({}) was overwritten at byte {byte} (pattern 0x{expected:02x}, \
                     found 0x{found:02x}) {when}; the plan lets two live tensors share bytes, \
                     re-plan and keep the plan check on",
                    self.tensor, self.name
                )
            }
            Fault::WeightsChanged { expected, found } => write!(
                f,
                "constant tensor {} ({}) does not hold its weights (fnv1a32 0x{expected:08x} \
                 expected, 0x{found:08x} found); the blob did not reach the board intact or a \
                 write hit its staged copy, rebuild and check the linker map",
                self.tensor, self.name
            ),
        }
    }
}

/// What a passing run covered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Ops run.
    pub ops: usize,
    /// Tensor checks made (each compares every byte of the tensor).
    pub checks: usize,
    /// Bytes compared against their pattern.
    pub bytes_checked: usize,
    /// Bytes filled with a pattern.
    pub bytes_filled: usize,
}

#[derive(Clone, Copy)]
struct Place {
    model: &'static str,
    op: usize,
    opcode: &'static str,
}

/// The first of `tensors` that does not hold its pattern (or, for a constant, its bytes).
fn check(tensors: &[View<&[u8]>], at: Place, moment: Moment, sum: &mut Summary) -> Option<Failure> {
    tensors.iter().find_map(|t| {
        sum.checks += 1;
        sum.bytes_checked += t.bytes.len();
        let fault = match t.hash {
            Some(expected) => {
                let found = fnv1a32(t.bytes);
                (found != expected).then_some(Fault::WeightsChanged { expected, found })
            }
            None => {
                first_mismatch(t.id, t.bytes).map(|(byte, expected, found)| Fault::Overwritten {
                    byte,
                    expected,
                    found,
                })
            }
        };
        fault.map(|fault| Failure {
            model: at.model,
            op: at.op,
            opcode: at.opcode,
            tensor: t.id,
            name: t.name,
            moment,
            fault,
        })
    })
}

/// Runs the canary over `subject`; the first clobbered tensor ends it.
pub fn run<S: Subject + ?Sized>(subject: &mut S) -> Result<Summary, Failure> {
    let model = subject.model();
    let mut sum = Summary::default();
    subject.start(&mut |tensors| {
        for t in tensors.iter_mut() {
            fill(t.id, t.bytes);
            sum.bytes_filled += t.bytes.len();
        }
    });
    let n = subject.ops();
    for k in 0..n {
        let opcode = subject.opcode(k);
        if k > 0 {
            subject.born(k, &mut |tensors| {
                for t in tensors.iter_mut() {
                    fill(t.id, t.bytes);
                    sum.bytes_filled += t.bytes.len();
                }
            });
        }
        let at = Place {
            model,
            op: k,
            opcode,
        };
        let mut failure = None;
        subject.op(k, &mut |reads, writes| {
            failure = check(reads, at, Moment::BeforeOp, &mut sum);
            if failure.is_none() {
                for t in writes.iter_mut() {
                    fill(t.id, t.bytes);
                    sum.bytes_filled += t.bytes.len();
                }
            }
        });
        if failure.is_none() {
            // A second, fresh view: the writes above went through other references.
            subject.op(k, &mut |reads, _| {
                failure = check(reads, at, Moment::AfterWrites, &mut sum);
            });
        }
        if let Some(f) = failure {
            return Err(f);
        }
        sum.ops += 1;
    }
    let at = Place {
        model,
        op: n,
        opcode: "end",
    };
    let mut failure = None;
    subject.end(&mut |outputs| {
        failure = check(outputs, at, Moment::AtEnd, &mut sum);
    });
    match failure {
        Some(f) => Err(f),
        None => Ok(sum),
    }
}

#[cfg(test)]
mod tests;
