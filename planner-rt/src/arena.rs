//! Storage for arenas and constant blobs, the singleton flag, and arena base addresses.

use core::cell::UnsafeCell;
use core::fmt;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};

use super::tensor::Element;

/// Alignment as a type: `Align<16>` makes an [`Arena`] or [`Blob`] start on a 16-byte
/// boundary. Implemented for every power of two from 1 to 65536.
pub struct Align<const N: usize>;

/// Maps an [`Align`] to a zero-sized type with that alignment. Sealed: only [`Align`]
/// implements it, for powers of two up to 65536.
pub trait Alignment: sealed::Sealed {
    /// A zero-sized type whose alignment is the wanted one.
    type Marker: Copy + Send + Sync;
}

mod sealed {
    pub trait Sealed {}
}

/// The zero-sized, aligned marker types behind [`Alignment`].
#[doc(hidden)]
pub mod marker {
    macro_rules! markers {
        ($($name:ident = $n:literal),* $(,)?) => {
            $(
                #[doc(hidden)]
                #[derive(Clone, Copy, Debug)]
                #[repr(C, align($n))]
                pub struct $name;
                impl super::sealed::Sealed for super::Align<$n> {}
                impl super::Alignment for super::Align<$n> {
                    type Marker = $name;
                }
            )*
        };
    }
    markers!(
        A1 = 1,
        A2 = 2,
        A4 = 4,
        A8 = 8,
        A16 = 16,
        A32 = 32,
        A64 = 64,
        A128 = 128,
        A256 = 256,
        A512 = 512,
        A1024 = 1024,
        A2048 = 2048,
        A4096 = 4096,
        A8192 = 8192,
        A16384 = 16384,
        A32768 = 32768,
        A65536 = 65536,
    );
}

/// The largest arena alignment [`Align`] supports.
pub const MAX_ALIGN: u64 = 65536;

/// The writable bytes of one arena, as a `static`: `N` bytes aligned to `A`, zero-filled (so
/// a `.bss`-style section holds it without file bytes).
///
/// It hands out nothing but its address; the generated model handle, of which
/// [`Once`] lets exactly one exist, is the only code that reads or writes the bytes.
#[repr(C)]
pub struct Arena<const N: usize, A: Alignment> {
    _align: [A::Marker; 0],
    bytes: UnsafeCell<[u8; N]>,
}

// SAFETY: the only safe operations on an `Arena` are `new`, `len` and `base`, which read no
// byte of it. Reads and writes go through the `Base` that `base` returns, in `unsafe` code
// whose contract (see `Base::slice_mut`) requires exclusive access; generated code gets that
// from the singleton handle, so sharing the `Arena` itself between threads races on nothing.
unsafe impl<const N: usize, A: Alignment> Sync for Arena<N, A> {}

impl<const N: usize, A: Alignment> Arena<N, A> {
    /// A zero-filled arena.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Arena {
            _align: [],
            bytes: UnsafeCell::new([0; N]),
        }
    }

    /// Its length in bytes.
    pub const fn len(&self) -> usize {
        N
    }

    /// True when it has no bytes.
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// Its start address, for the model handle.
    pub const fn base(&'static self) -> Base {
        Base::new(self.bytes.get().cast::<u8>())
    }
}

/// The bytes of one constant blob, as a `static`: `N` bytes aligned to `A`, read-only.
/// Generated code fills it from `include_bytes!` of the blob `planner-build` wrote.
#[repr(C)]
pub struct Blob<const N: usize, A: Alignment> {
    _align: [A::Marker; 0],
    bytes: [u8; N],
}

impl<const N: usize, A: Alignment> Blob<N, A> {
    /// A blob holding `bytes`.
    pub const fn new(bytes: [u8; N]) -> Self {
        Blob { _align: [], bytes }
    }

    /// The bytes.
    pub const fn bytes(&self) -> &[u8; N] {
        &self.bytes
    }

    /// Its start address, for the model handle. The handle never writes through it: views
    /// of constant tensors are shared references.
    pub const fn base(&'static self) -> Base {
        Base::new(self.bytes.as_ptr().cast_mut())
    }
}

/// Copies `bytes` into an array of `N` bytes, for [`Blob::new`] from `include_bytes!`.
///
/// When the lengths differ it copies what fits and zero-fills the rest instead of failing:
/// the generated plan check already stops the build with a message naming the arena and
/// both lengths, and a second, vaguer error here would only hide it.
pub const fn copy_blob<const N: usize>(bytes: &[u8]) -> [u8; N] {
    if let Some(exact) = bytes.first_chunk::<N>()
        && bytes.len() == N
    {
        return *exact;
    }
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N && i < bytes.len() {
        out[i] = bytes[i];
        i += 1;
    }
    out
}

/// Hands out the model handle once: the first [`Once::take`] returns `true`, every later
/// one `false`.
#[derive(Debug)]
pub struct Once(AtomicBool);

impl Once {
    /// A flag not taken yet.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Once {
        Once(AtomicBool::new(false))
    }

    /// `true` exactly once over the life of the program, whichever thread or interrupt
    /// asks first.
    pub fn take(&self) -> bool {
        !self.0.swap(true, Ordering::AcqRel)
    }
}

/// The start address of one arena inside a model handle: a static [`Arena`], a static
/// [`Blob`], or a buffer the application bound with [`bind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Base(NonNull<u8>);

impl Base {
    const fn new(ptr: *mut u8) -> Base {
        match NonNull::new(ptr) {
            Some(p) => Base(p),
            // A reference's address is never null; this arm only satisfies the types.
            None => Base(NonNull::dangling()),
        }
    }

    /// The address, for diagnostics and C interop.
    pub fn addr(self) -> usize {
        self.0.as_ptr() as usize
    }

    /// The raw pointer, for C kernels.
    pub fn as_ptr(self) -> *mut u8 {
        self.0.as_ptr()
    }

    /// A shared view of `len` elements of `T` at byte `offset`.
    ///
    /// # Safety
    ///
    /// `offset + len * size_of::<T>()` bytes lie inside the arena, `base + offset` is aligned
    /// for `T`, and for `'a` nothing writes those bytes (no `&mut` to them exists).
    pub unsafe fn slice<'a, T: Element>(self, offset: usize, len: usize) -> &'a [T] {
        // SAFETY: the caller guarantees bounds, alignment and the absence of writers; every
        // `Element` is valid for any initialised bytes, and arena bytes are always
        // initialised (zero-filled statics, blobs, or `&mut [u8]` buffers).
        unsafe { core::slice::from_raw_parts(self.0.as_ptr().add(offset).cast::<T>(), len) }
    }

    /// A mutable view of `len` elements of `T` at byte `offset`.
    ///
    /// # Safety
    ///
    /// As for [`Base::slice`], and for `'a` no other reference to those bytes exists; the
    /// arena is writable (not a [`Blob`]).
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slice_mut<'a, T: Element>(self, offset: usize, len: usize) -> &'a mut [T] {
        // SAFETY: as in `slice`, plus the caller guarantees exclusivity and writability.
        unsafe { core::slice::from_raw_parts_mut(self.0.as_ptr().add(offset).cast::<T>(), len) }
    }

    /// Zeroes the first `len` bytes.
    ///
    /// # Safety
    ///
    /// The arena is writable, at least `len` bytes long, and no reference into it is alive.
    pub unsafe fn zero(self, len: usize) {
        // SAFETY: the caller guarantees a writable, unshared range of `len` bytes.
        unsafe { core::ptr::write_bytes(self.0.as_ptr(), 0, len) }
    }

    /// Sets the `len` bytes from byte `offset` to `byte` (an int8 variable starts at its
    /// zero point).
    ///
    /// # Safety
    ///
    /// The arena is writable, `offset + len` bytes lie inside it, and no reference into it
    /// is alive.
    pub unsafe fn fill(self, offset: usize, len: usize, byte: u8) {
        // SAFETY: the caller guarantees a writable, unshared range inside the arena.
        unsafe { core::ptr::write_bytes(self.0.as_ptr().wrapping_add(offset), byte, len) }
    }

    /// Copies `src` to the start of the arena (hydrates a staged constant arena).
    ///
    /// # Safety
    ///
    /// The arena is writable, at least `src.len()` bytes long, no reference into it is
    /// alive, and it does not overlap `src`.
    pub unsafe fn copy_from(self, src: &[u8]) {
        // SAFETY: the caller guarantees a writable, unshared destination that does not
        // overlap the source.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), self.0.as_ptr(), src.len()) }
    }
}

/// Why a buffer cannot hold an arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindFault {
    /// The buffer is shorter than the arena.
    TooSmall {
        /// Bytes the arena needs.
        needed: usize,
        /// Bytes the buffer has.
        given: usize,
    },
    /// The buffer does not start on the arena's alignment.
    Misaligned {
        /// The buffer's address.
        address: usize,
        /// The alignment the arena needs.
        align: usize,
    },
}

/// A buffer the application offered for an arena does not fit it: which model, which arena,
/// and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindError {
    /// The model's name.
    pub model: &'static str,
    /// The arena's name (`scratch.SRAM`, `persistent.DTCM`, ...).
    pub arena: &'static str,
    /// What is wrong.
    pub fault: BindFault,
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let BindError { model, arena, .. } = self;
        match self.fault {
            BindFault::TooSmall { needed, given } => write!(
                f,
                "buffer for arena {arena} of model {model} is too small: {given} bytes given, {needed} needed; pass a buffer of at least {needed} bytes"
            ),
            BindFault::Misaligned { address, align } => write!(
                f,
                "buffer for arena {arena} of model {model} at {address:#x} is not aligned to {align} bytes; align the buffer to {align} (for example with #[repr(align({align}))])"
            ),
        }
    }
}

impl core::error::Error for BindError {}

/// Checks that `buf` can hold arena `arena` of model `model` (`size` bytes aligned to
/// `align`) and returns its base. The buffer is borrowed `mut`; the generated handle that
/// keeps the base carries the borrow's lifetime (`Handle<'a>`), so nothing else can read or
/// write the buffer while the handle uses it.
pub fn bind(
    model: &'static str,
    arena: &'static str,
    buf: &mut [u8],
    size: usize,
    align: usize,
) -> Result<Base, BindError> {
    let fault = if buf.len() < size {
        Some(BindFault::TooSmall {
            needed: size,
            given: buf.len(),
        })
    } else if align == 0 || !(buf.as_ptr() as usize).is_multiple_of(align) {
        Some(BindFault::Misaligned {
            address: buf.as_ptr() as usize,
            align,
        })
    } else {
        None
    };
    match fault {
        Some(fault) => Err(BindError {
            model,
            arena,
            fault,
        }),
        None => Ok(Base::new(buf.as_mut_ptr())),
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    static ARENA: Arena<24, Align<32>> = Arena::new();
    static BLOB: Blob<8, Align<16>> = Blob::new(copy_blob(&[1, 2, 3, 4, 5, 6, 7, 8]));

    #[test]
    fn statics_are_aligned_and_views_read_and_write() {
        let base = ARENA.base();
        assert_eq!(base.addr() % 32, 0);
        assert_eq!(
            core::mem::size_of_val(&ARENA),
            32,
            "a type's size is a multiple of its alignment"
        );
        assert_eq!(BLOB.base().addr() % 16, 0);
        // SAFETY: this test is the only user of ARENA; the ranges are inside its 24 bytes,
        // aligned for their types, and no two views are alive at once.
        unsafe {
            base.slice_mut::<i32>(4, 2).copy_from_slice(&[-1, 7]);
            assert_eq!(base.slice::<i32>(4, 2), &[-1, 7]);
            base.copy_from(BLOB.bytes());
            assert_eq!(base.slice::<u8>(0, 8), BLOB.bytes());
            base.zero(24);
            assert_eq!(base.slice::<u8>(0, 24), &[0; 24]);
        }
    }

    #[test]
    fn copy_blob_pads_or_truncates_and_once_gives_once() {
        assert_eq!(copy_blob::<4>(&[9, 8]), [9, 8, 0, 0]);
        assert_eq!(copy_blob::<2>(&[9, 8, 7]), [9, 8]);
        let once = Once::new();
        assert!(once.take());
        assert!(!once.take());
    }

    static BUFFERS: [Arena<64, Align<16>>; 3] = [Arena::new(), Arena::new(), Arena::new()];

    /// A `&'static mut` buffer without leaking (Miri checks leaks): each of `BUFFERS` is
    /// handed out once, by this test only.
    fn buffer(i: usize) -> &'static mut [u8] {
        // SAFETY: `bind_checks_size_and_alignment` calls this once per index, so no other
        // reference to `BUFFERS[i]` ever exists; 64 bytes in bounds, `u8` needs no alignment.
        unsafe { BUFFERS[i].base().slice_mut::<u8>(0, 64) }
    }

    #[test]
    fn bind_checks_size_and_alignment() {
        let buf = buffer(0);
        let addr = buf.as_ptr() as usize;
        let err = bind("m", "scratch.SRAM", &mut buf[..8], 16, 1).unwrap_err();
        assert_eq!(
            err.fault,
            BindFault::TooSmall {
                needed: 16,
                given: 8
            }
        );
        let text = std::string::ToString::to_string(&err);
        assert!(
            text.contains("arena scratch.SRAM of model m is too small"),
            "{text}"
        );
        // An offset that breaks 2-byte alignment whatever the allocation's address.
        let skip = usize::from(addr.is_multiple_of(2));
        let err = bind("m", "persistent.DTCM", &mut buffer(1)[skip..], 16, 2).unwrap_err();
        assert!(matches!(err.fault, BindFault::Misaligned { align: 2, .. }));
        let base = bind("m", "scratch.SRAM", buffer(2), 64, 1).unwrap();
        assert_ne!(base.addr(), 0);
    }
}
