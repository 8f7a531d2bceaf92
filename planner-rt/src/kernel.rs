//! The interface between a model's generated `run()` and a kernel set.
//!
//! `include_model!` generates `Model::run(&mut self, kernels: &mut K)`, which walks the ops
//! in plan order and calls, for each, the method of the kernel trait of its kind
//! ([`Conv2d::conv_2d`], [`FullyConnected::fully_connected`], ...) with an [`OpView`] (the
//! op's inputs shared, its outputs and scratch mutable, each with shape and quantisation)
//! and the op's typed options. `run` asks `K` for exactly the kinds the model uses, so a
//! kernel set without one is a compile error that names the op. Builtin ops without typed
//! options go to [`Builtin`], keyed by their TFLite name, and custom ops to [`Custom`],
//! keyed by their custom code ([`op_key`]); the compile error names those too.
//!
//! [`Hooks`] see every op before and after it runs (timing, tracing, canaries), through
//! `run_with`; [`Hooks::tap`] also sees its input and output tensors, read-only, after it
//! ran.
//!
//! A model planned with patches (`PatchPlan` in the plan file) runs its first stage once
//! per patch: `run()` then also asks `K` for [`Patches`], and each stage op gets views
//! with [`In::region`] and [`Out::region`] set (dense or whole, see [`Region`]). A model
//! whose input is streamed has `run_streamed(kernels, fill)` instead of `run()`: `fill`
//! gets each patch's input region and its dense buffer before the patch's stage ops.

use super::tensor::{Element, Quant, TensorInfo};

/// Declares one kernel trait per op kind with typed options, from the rows of
/// [`__op_kinds`](crate::__op_kinds): `include_model!`'s `run()` asks for exactly the kinds
/// the model uses, so a missing kernel is a compile error naming the op.
macro_rules! kind_traits {
    ($($(#[$doc:meta])* $variant:ident = $opcode:literal, $ty:ident, $method:ident, $missing:literal;)*) => {
        $(
            #[doc = concat!("Runs `", $opcode, "` ops.")]
            #[diagnostic::on_unimplemented(
                message = $missing,
                label = "the model runs an op this kernel set has no kernel for",
                note = "implement the op's trait of `planner::rt::kernel` for `{Self}`, or run the model with a kernel set that has it"
            )]
            pub trait $variant: Kernel {
                #[doc = concat!("Runs one `", $opcode, "` op: its tensors in `op`, its options in `options`.")]
                fn $method(&mut self, op: OpView<'_, '_>, options: &crate::options::$ty) -> Result<(), Self::Error>;
            }
        )*
    };
}

crate::__op_kinds!(kind_traits);

/// Declares one in-place kernel trait per op kind that can run in place, from the rows of
/// [`__in_place_kinds`](crate::__in_place_kinds): `run()` asks for it when the plan runs an
/// op of that kind in place, so a kernel set without it is a compile error naming the op.
macro_rules! in_place_traits {
    ($($variant:ident => $trait:ident, $method:ident, $ty:ident, $opcode:literal, $missing:literal, $note:literal;)*) => {
        $(
            #[doc = concat!("Runs `", $opcode, "` ops in place.")]
            ///
            /// The view is the op's usual one, except that the input the output takes
            /// over is [`Data::InPlace`](crate::kernel::Data::InPlace) of that output,
            /// and that output's buffer (of the output's element type) spans the longer of
            /// the two tensors: the input's bytes are at its start when the kernel starts
            /// (read them as the input's element type, native byte order: a `QUANTIZE`
            /// from `f32` to `i8` reads 4 bytes per element), and the output's elements
            /// must be at its start when it returns. The shapes and quantisation of both
            /// are in the view as usual. A depthwise convolution also gets its temporary
            /// (one input channel) as its last scratch tensor.
            #[diagnostic::on_unimplemented(
                message = $missing,
                label = "the plan runs this op in place",
                note = $note
            )]
            pub trait $trait: Kernel {
                #[doc = concat!("Runs one `", $opcode, "` op in place: its tensors in `op`, its options in `options`.")]
                fn $method(&mut self, op: OpView<'_, '_>, options: &crate::options::$ty) -> Result<(), Self::Error>;
            }
        )*
    };
}

crate::__in_place_kinds!(in_place_traits);

/// A kernel set: the error its kernels return. The op kinds it runs are the traits of this
/// module it implements.
pub trait Kernel {
    /// What a kernel returns when it cannot run an op (an element type it lacks, shapes
    /// that do not fit).
    type Error;
}

/// The key of an op name in [`Builtin`] and [`Custom`]: the FNV-1a 128 hash of its
/// bytes. `Builtin<{ op_key("SQUARED_DIFFERENCE") }>` runs `SQUARED_DIFFERENCE`
/// ops, `Custom<{ op_key("SignalWindow") }>` custom ops whose custom code is
/// `SignalWindow`.
pub const fn op_key(name: &str) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let bytes = name.as_bytes();
    let mut hash = OFFSET;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u128;
        hash = hash.wrapping_mul(PRIME);
        i += 1;
    }
    hash
}

/// Runs a builtin op kind without typed options (one that is not a trait of this module),
/// by its TFLite name: `impl Builtin<{ op_key("SQUARED_DIFFERENCE") }> for MyKernels`.
/// A model with such an op asks for it in its `run()` bounds, through a trait of its
/// `op_kinds` module whose compile error names the op.
pub trait Builtin<const NAME: u128>: Kernel {
    /// Runs one op of the kind; `op.opcode` names it.
    fn builtin(&mut self, op: OpView<'_, '_>) -> Result<(), Self::Error>;
}

/// Runs a custom op, by its custom code: `impl Custom<{ op_key("SignalWindow") }> for
/// MyKernels`. A model with such an op asks for it in its `run()` bounds, through a trait
/// of its `op_kinds` module whose compile error names the custom code.
pub trait Custom<const CODE: u128>: Kernel {
    /// Runs one op with the custom code; `op.opcode` is `"CUSTOM:<code>"`.
    fn custom(&mut self, op: OpView<'_, '_>) -> Result<(), Self::Error>;
}

macro_rules! data {
    ($($variant:ident($t:ty),)*) => {
        /// The elements of an input, by element type.
        #[derive(Debug, Clone, Copy)]
        pub enum Data<'a> {
            $(#[doc = concat!("`", stringify!($t), "` elements.")] $variant(&'a [$t]),)*
            /// The input's bytes are those of output `n` (the plan made the op work in
            /// place): read them there.
            InPlace(usize),
            /// A variable input (state the op updates, such as an SVDF's or an LSTM's):
            /// it is [`OpView::variables`]`[n]`, mutable.
            Variable(usize),
        }

        /// The elements of an output or scratch tensor, by element type.
        #[derive(Debug)]
        pub enum DataMut<'a> {
            $(#[doc = concat!("`", stringify!($t), "` elements.")] $variant(&'a mut [$t]),)*
        }

        impl DataMut<'_> {
            /// Keeps only the first `len` elements (all of them when there are fewer).
            pub fn truncate(&mut self, len: usize) {
                match self {
                    $(DataMut::$variant(s) => {
                        let all = core::mem::take(s);
                        let keep = if len < all.len() { len } else { all.len() };
                        *s = &mut all[..keep];
                    })*
                }
            }

            /// The same elements, shared.
            pub fn as_data(&self) -> Data<'_> {
                match self {
                    $(DataMut::$variant(s) => Data::$variant(s),)*
                }
            }
        }

        impl Data<'_> {
            /// Number of elements; `None` for [`Data::InPlace`] and [`Data::Variable`],
            /// which hold none themselves.
            pub fn len(&self) -> Option<usize> {
                match self {
                    $(Data::$variant(s) => Some(s.len()),)*
                    Data::InPlace(_) | Data::Variable(_) => None,
                }
            }

            /// True when the elements are known and there are none.
            pub fn is_empty(&self) -> bool {
                self.len() == Some(0)
            }
        }

        $(
            impl<'a> From<&'a [$t]> for Data<'a> {
                fn from(s: &'a [$t]) -> Self {
                    Data::$variant(s)
                }
            }
            impl<'a> From<&'a mut [$t]> for DataMut<'a> {
                fn from(s: &'a mut [$t]) -> Self {
                    DataMut::$variant(s)
                }
            }
        )*
    };
}

data! {
    I8(i8),
    U8(u8),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F32(f32),
    F64(f64),
    C64([f32; 2]),
    C128([f64; 2]),
}

/// The part of a 4-D `[batch, height, width, channels]` tensor that an op of a patch stage
/// reads or writes in one patch (see `PatchPlan` in the plan file): rows
/// `top..top + height`, columns `left..left + width`, every channel, batch 0.
///
/// A view with a region holds its elements in one of two layouts, told apart by the
/// data's length ([`Region::pixel`] does the arithmetic):
/// - *dense* (`height · width · channels` elements): only the region's elements, row after
///   row, each row `width · channels` long. The tensors inside a patch stage, placed with
///   the size of their largest region, are viewed so.
/// - *whole* (the shape's product of elements): the whole tensor, of which the op reads or
///   writes only the region. The split tensor (each patch writes its tile in place) and a
///   resident model input are viewed so.
///
/// The view's `shape` stays the whole tensor's in both, so a kernel knows where the true
/// image border is: padding applies only outside `0..shape[1]` and `0..shape[2]`, never
/// at a region's edge inside the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Region {
    /// First row, in the whole tensor.
    pub top: usize,
    /// First column, in the whole tensor.
    pub left: usize,
    /// Rows.
    pub height: usize,
    /// Columns.
    pub width: usize,
}

impl Region {
    /// The region `[top, left, height, width]`.
    pub const fn new(top: usize, left: usize, height: usize, width: usize) -> Region {
        Region {
            top,
            left,
            height,
            width,
        }
    }

    /// The whole of a `[batch, height, width, channels]` shape (`None` for another rank).
    pub fn whole(shape: &[usize]) -> Option<Region> {
        match shape {
            [_, h, w, _] => Some(Region::new(0, 0, *h, *w)),
            _ => None,
        }
    }

    /// True when row `y` and column `x` of the tensor lie in the region.
    pub const fn contains(&self, y: usize, x: usize) -> bool {
        y >= self.top && y - self.top < self.height && x >= self.left && x - self.left < self.width
    }

    /// The index in a view's data of channel 0 of pixel `(y, x)` (whole-tensor
    /// coordinates, batch 0) of a `[batch, height, width, channels]` tensor of shape
    /// `shape`, whose view over this region holds `len` elements: dense or whole (see
    /// [`Region`]). `None` when the pixel is outside the region, the shape is not 4-D, or
    /// `len` is neither layout's length.
    pub fn pixel(&self, shape: &[usize], len: usize, y: usize, x: usize) -> Option<usize> {
        let [_, h, w, c] = *shape else {
            return None;
        };
        if !self.contains(y, x) {
            return None;
        }
        let dense = self.height.checked_mul(self.width)?.checked_mul(c)?;
        let whole = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
        if len == dense {
            Some(((y - self.top) * self.width + (x - self.left)) * c)
        } else if len == whole && y < h && x < w {
            Some((y * w + x) * c)
        } else {
            None
        }
    }
}

/// A view struct (`In`, `Out`) over one tensor's elements of type `$data` (taken from a
/// `&[T]`, or a `&mut [T]` with `mut`), with its `new` and `with_region`.
macro_rules! view {
    (
        $(#[$meta:meta])*
        $name:ident($data:ident $(, $mut:tt)?),
        $(#[$region:meta])*
    ) => {
        $(#[$meta])*
        pub struct $name<'a> {
            /// Its elements: all of them, or those of `region`.
            pub data: $data<'a>,
            /// Its shape (the whole tensor's, also when `region` is set).
            pub shape: &'static [usize],
            /// Its quantisation.
            pub quant: Option<Quant>,
            $(#[$region])*
            pub region: Option<Region>,
        }

        impl<'a> $name<'a> {
            /// The view of `data`, described by `info`.
            pub fn new<T: Element>(data: &'a $($mut)? [T], info: &TensorInfo<T>) -> Self
            where
                $data<'a>: From<&'a $($mut)? [T]>,
            {
                $name {
                    data: $data::from(data),
                    shape: info.shape,
                    quant: info.quant,
                    region: None,
                }
            }

            /// The same view over the part `region` of the tensor (for a patch stage).
            pub fn with_region(self, region: Region) -> Self {
                $name {
                    region: Some(region),
                    ..self
                }
            }
        }
    };
}

view! {
    /// One input of an op.
    #[derive(Debug, Clone, Copy)]
    In(Data),
    /// The part of the tensor `data` holds, for an op of a patch stage; `None` for the
    /// whole tensor.
}

view! {
    /// One output (or scratch tensor) of an op.
    #[derive(Debug)]
    Out(DataMut, mut),
    /// The part of the tensor the op writes in this patch, for an op of a patch stage;
    /// `None` for the whole tensor.
}

impl<'a> In<'a> {
    /// An input whose bytes are output `output`'s.
    pub fn in_place<T>(output: usize, info: &TensorInfo<T>) -> Self {
        In {
            data: Data::InPlace(output),
            shape: info.shape,
            quant: info.quant,
            region: None,
        }
    }

    /// A variable input, which is `variables[at]` of the op's view.
    pub fn variable<T>(at: usize, info: &TensorInfo<T>) -> Self {
        In {
            data: Data::Variable(at),
            shape: info.shape,
            quant: info.quant,
            region: None,
        }
    }

    /// The elements as `i8`, when they are.
    pub fn i8(&self) -> Option<&'a [i8]> {
        match self.data {
            Data::I8(d) => Some(d),
            _ => None,
        }
    }

    /// The elements as `i16`, when they are.
    pub fn i16(&self) -> Option<&'a [i16]> {
        match self.data {
            Data::I16(d) => Some(d),
            _ => None,
        }
    }

    /// The elements as `i32`, when they are.
    pub fn i32(&self) -> Option<&'a [i32]> {
        match self.data {
            Data::I32(d) => Some(d),
            _ => None,
        }
    }

    /// The elements as `f32`, when they are.
    pub fn f32(&self) -> Option<&'a [f32]> {
        match self.data {
            Data::F32(d) => Some(d),
            _ => None,
        }
    }
}

impl<'a> Out<'a> {
    /// Keeps only the first `len` elements (all of them when there are fewer): the tap of
    /// an op that ran in place shows its output without the input's tail.
    pub fn truncate(&mut self, len: usize) {
        self.data.truncate(len);
    }

    /// The elements as `i8`, when they are.
    pub fn i8(&mut self) -> Option<&mut [i8]> {
        match &mut self.data {
            DataMut::I8(d) => Some(d),
            _ => None,
        }
    }

    /// The elements as `i16`, when they are.
    pub fn i16(&mut self) -> Option<&mut [i16]> {
        match &mut self.data {
            DataMut::I16(d) => Some(d),
            _ => None,
        }
    }

    /// The elements as `i32`, when they are.
    pub fn i32(&mut self) -> Option<&mut [i32]> {
        match &mut self.data {
            DataMut::I32(d) => Some(d),
            _ => None,
        }
    }

    /// The elements as `f32`, when they are.
    pub fn f32(&mut self) -> Option<&mut [f32]> {
        match &mut self.data {
            DataMut::F32(d) => Some(d),
            _ => None,
        }
    }
}

/// What a kernel gets of one op: its place in the plan and its tensors.
#[derive(Debug)]
pub struct OpView<'v, 'a> {
    /// The op's index in plan order.
    pub index: usize,
    /// The op's name (`"CONV_2D"`, `"CUSTOM:..."`).
    pub opcode: &'static str,
    /// Inputs, in the model's order; `None` for an optional input left out.
    pub inputs: &'v [Option<In<'a>>],
    /// Outputs, in the model's order.
    pub outputs: &'v mut [Out<'a>],
    /// Op-local scratch tensors (TFLite intermediates).
    pub scratch: &'v mut [Out<'a>],
    /// Variable inputs (state the op reads and updates), in input order; their entries in
    /// `inputs` are [`Data::Variable`].
    pub variables: &'v mut [Out<'a>],
}

impl<'a> OpView<'_, 'a> {
    /// Input `i`, when present.
    pub fn input(&self, i: usize) -> Option<In<'a>> {
        self.inputs.get(i).copied().flatten()
    }

    /// Input `i` as the mutable variable it is, when it is one.
    pub fn variable(&mut self, i: usize) -> Option<&mut Out<'a>> {
        match self.input(i)?.data {
            Data::Variable(at) => self.variables.get_mut(at),
            _ => None,
        }
    }
}

/// A kernel set whose kernels honour [`In::region`] and [`Out::region`] for every op kind
/// a patch stage may hold (convolutions, depthwise convolutions, pooling, `PAD`,
/// elementwise and unary ops): the generated `run()` of a model planned with patches
/// asks for it, so a kernel set that would compute whole-tensor arithmetic on a region
/// is a compile error.
#[diagnostic::on_unimplemented(
    message = "the kernel set `{Self}` does not declare that it runs ops on patch regions, and the model was planned with patches",
    label = "the model's first stage runs patch by patch",
    note = "implement `planner::rt::kernel::Patches` for `{Self}` once its kernels honour `In::region` and `Out::region`, or plan the model without `patches`"
)]
pub trait Patches: Kernel {}

/// A kernel set whose int8 `CONV_2D`, `DEPTHWISE_CONV_2D` and `FULLY_CONNECTED` kernels read
/// the constants the planner prepares with `[kernels] set = "optimized"`: an op the plan
/// file marks `"prepared": {"layout": "requant-v1", "input": 3}` has, as its input 3, an
/// int32 `[3, c_out]` tensor of effective biases, Q31 multipliers and shifts, laid out as
/// [`prepare::requant_v1`](crate::prepare::requant_v1) writes it (the bias and the filter
/// stay inputs 2 and 1). The generated `run()` of a plan with prepared ops asks for it, so a
/// kernel set that would ignore them (and recompute, or misread input 3) is a compile error.
///
/// Such a plan may also give an int8 `CONV_2D` that runs through im2col rows (every filter
/// but a 1x1 one without explicit padding) a kernel scratch tensor of
/// [`prepare::im2col_bytes`](crate::prepare::im2col_bytes) int8 elements as its `scratch[0]`
/// (`"kernel_scratch": [0]` in the plan file), live during the op only; and an int8
/// `UNIDIRECTIONAL_SEQUENCE_LSTM` a kernel scratch tensor of
/// [`prepare::lstm_scratch_len`](crate::prepare::lstm_scratch_len) int32 elements as its
/// `scratch[0]`, before the model's own intermediates.
#[diagnostic::on_unimplemented(
    message = "the plan was prepared for the optimized kernel set (requant-v1); run it with `planner_kernels::Optimized`, or plan with [kernels] set = \"reference\"",
    label = "`{Self}` does not declare that it reads the prepared requant-v1 constants",
    note = "a kernel set whose int8 convolution and fully-connected kernels read input 3 as [effective bias; multiplier; shift] implements `planner::rt::kernel::RequantV1`"
)]
pub trait RequantV1: Kernel {}

/// Sees every op before and after it runs. `()` sees nothing.
///
/// In a model planned with patches, each op of the first stage is seen once per patch, in
/// patch order: `before_op`, `after_op` and `tap` with the same index every time, and the
/// tap's views over that patch's regions ([`In::region`]; a dense view holds only the
/// region's elements, the split tensor's whole view all of it, its tiles filled so far).
/// The ops after the stage are seen once.
pub trait Hooks {
    /// Called before op `index` (`opcode`) runs.
    fn before_op(&mut self, index: usize, opcode: &'static str) {
        let _ = (index, opcode);
    }
    /// Called after op `index` (`opcode`) ran without error.
    fn after_op(&mut self, index: usize, opcode: &'static str) {
        let _ = (index, opcode);
    }
    /// Called after op `op.index` ran without error (after [`Hooks::after_op`]), with its
    /// tensors read-only: compare or log intermediate tensors here.
    fn tap(&mut self, op: &Tap<'_, '_>) {
        let _ = op;
    }
}

/// An op's tensors after it ran, read-only, for [`Hooks::tap`]: its inputs (an input the
/// kernel read in place, or a variable it updated, is shown as those bytes are now) and
/// its outputs.
#[derive(Debug)]
pub struct Tap<'v, 'a> {
    /// The op's index in plan order.
    pub index: usize,
    /// The op's name (`"CONV_2D"`, `"CUSTOM:..."`).
    pub opcode: &'static str,
    inputs: &'v [Option<In<'a>>],
    outputs: &'v [Out<'a>],
    variables: &'v [Out<'a>],
}

impl<'v, 'a> Tap<'v, 'a> {
    /// The tap of op `index` (`opcode`) over the tensors its kernel was given; for
    /// generated code.
    #[doc(hidden)]
    pub fn new(
        index: usize,
        opcode: &'static str,
        inputs: &'v [Option<In<'a>>],
        outputs: &'v [Out<'a>],
        variables: &'v [Out<'a>],
    ) -> Self {
        Tap {
            index,
            opcode,
            inputs,
            outputs,
            variables,
        }
    }

    /// Number of inputs (optional inputs left out count too).
    pub fn inputs(&self) -> usize {
        self.inputs.len()
    }

    /// Input `i`, with its elements; `None` when the op has no input `i` or it was left
    /// out. An input whose bytes are an output's, or a variable, shows those bytes now,
    /// after the op ran.
    pub fn input(&self, i: usize) -> Option<In<'_>> {
        let x = self.inputs.get(i).copied().flatten()?;
        let data = match x.data {
            Data::InPlace(n) => self.outputs.get(n)?.data.as_data(),
            Data::Variable(n) => self.variables.get(n)?.data.as_data(),
            data => data,
        };
        Some(In {
            data,
            shape: x.shape,
            quant: x.quant,
            region: x.region,
        })
    }

    /// Number of outputs.
    pub fn outputs(&self) -> usize {
        self.outputs.len()
    }

    /// Output `i`, with its elements; `None` when the op has no output `i`.
    pub fn output(&self, i: usize) -> Option<In<'_>> {
        let y = self.outputs.get(i)?;
        Some(In {
            data: y.data.as_data(),
            shape: y.shape,
            quant: y.quant,
            region: y.region,
        })
    }
}

impl Hooks for () {}

/// A kernel's error, with the op it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError<E> {
    /// The op's index in plan order.
    pub op: usize,
    /// The op's name.
    pub opcode: &'static str,
    /// What the kernel returned.
    pub error: E,
}

impl<E: core::fmt::Display> core::fmt::Display for RunError<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "op {} ({}) failed: {}", self.op, self.opcode, self.error)
    }
}

#[cfg(test)]
mod region_tests {
    use super::Region;

    #[test]
    fn pixel_reads_dense_and_whole_layouts() {
        let shape = [1, 6, 5, 3];
        let r = Region::new(2, 1, 3, 2);
        // Dense: 3 rows of 2 pixels of 3 channels.
        assert_eq!(r.pixel(&shape, 18, 2, 1), Some(0));
        assert_eq!(r.pixel(&shape, 18, 4, 2), Some((2 * 2 + 1) * 3));
        // Whole: the tensor's own layout.
        assert_eq!(r.pixel(&shape, 90, 4, 2), Some((4 * 5 + 2) * 3));
        // Outside the region, or a length of neither layout.
        assert_eq!(r.pixel(&shape, 18, 1, 1), None);
        assert_eq!(r.pixel(&shape, 18, 2, 3), None);
        assert_eq!(r.pixel(&shape, 17, 2, 1), None);
        assert_eq!(r.pixel(&[6, 5, 3], 18, 2, 1), None);
    }
}
