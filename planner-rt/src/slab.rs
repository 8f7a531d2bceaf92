//! Step scopes: a bump slab for the buffers that live outside the static plan.
//!
//! Pre- and post-processing, a feature extractor or a decoder loop need temporary buffers per
//! step that are not tensors of the model graph. A [`Slab`] is one pre-sized byte region with
//! a bump pointer: every allocation carves the next bytes, [`Slab::reset`] (or the end of a
//! [`StepScope`]) hands them all back at once, and the borrow checker refuses any slice that
//! would outlive the step it was allocated in. Nothing is allocated from a heap, and nothing
//! here needs `std`.
//!
//! A slab that is too small does not corrupt anything: the allocation that does not fit
//! returns an [`Overflow`], the slices handed out before it stay valid, and the slab records
//! how many bytes the step asked for in total, so [`Slab::needed`] says the size the slab
//! should have had.
//!
//! ```
//! use core::mem::MaybeUninit;
//! use planner_rt::slab::Slab;
//!
//! // Any byte region will do; this one is aligned so that the figures below do not depend on
//! // where the stack happens to put it.
//! #[repr(align(16))]
//! struct Region([MaybeUninit<u8>; 256]);
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut region = Region([MaybeUninit::uninit(); 256]);
//! let mut slab = Slab::new(&mut region.0);
//! let mut features = [[0i8; 8]; 3];
//! for (frame, out) in features.iter_mut().enumerate() {
//!     slab.scope(|s| -> Result<(), Box<dyn std::error::Error>> {
//!         let samples = s.alloc_with(32, |i| (frame * 100 + i) as i16)?;
//!         let energy = s.alloc::<i32>(8)?;
//!         for (e, chunk) in energy.iter_mut().zip(samples.chunks(4)) {
//!             *e = chunk.iter().map(|&x| i32::from(x) * i32::from(x)).sum();
//!         }
//!         let quantised = s.alloc_with(8, |i| (energy[i] >> 12).clamp(-128, 127) as i8)?;
//!         // `retain` is the one way a step's result outlives the step.
//!         s.retain(quantised, out)?;
//!         Ok(())
//!     })?;
//! }
//! assert_eq!(slab.used(), 0); // every step ended with a reset
//! assert_eq!(slab.high_water(), 64 + 32 + 8); // i16 x 32, i32 x 8, i8 x 8
//! assert_eq!(slab.overflow(), 0);
//! assert_eq!(features[2], [39, 41, 42, 44, 46, 47, 49, 51]);
//! # Ok(())
//! # }
//! ```
//!
//! # What the borrow checker refuses
//!
//! A slice used after the slab was reset:
//!
//! ```compile_fail,E0502
//! use core::mem::MaybeUninit;
//! use planner_rt::slab::Slab;
//!
//! let mut region = [MaybeUninit::<u8>::uninit(); 64];
//! let mut slab = Slab::new(&mut region);
//! let a = slab.alloc::<u8>(16).unwrap();
//! slab.reset(); // error: `slab` is still borrowed by `a`
//! a[0] = 1;
//! ```
//!
//! A slice escaping the step that allocated it:
//!
//! ```compile_fail
//! use core::mem::MaybeUninit;
//! use planner_rt::slab::Slab;
//!
//! let mut region = [MaybeUninit::<u8>::uninit(); 64];
//! let mut slab = Slab::new(&mut region);
//! let escaped = slab.scope(|s| s.alloc::<u8>(16).unwrap()); // error: lifetime may not live long enough
//! escaped[0] = 1;
//! ```
//!
//! Nor through a variable the closure captures, where the next step would hand the same bytes
//! out again:
//!
//! ```compile_fail,E0521
//! use core::mem::MaybeUninit;
//! use planner_rt::slab::Slab;
//!
//! let mut region = [MaybeUninit::<u8>::uninit(); 64];
//! let mut slab = Slab::new(&mut region);
//! let mut kept: Option<&mut [u8]> = None;
//! slab.scope(|s| kept = s.alloc::<u8>(16).ok()); // error: borrowed data escapes the closure
//! slab.scope(|s| s.alloc::<u8>(16).unwrap()[0] = 2);
//! if let Some(a) = kept {
//!     a[0] = 1;
//! }
//! ```
//!
//! Two mutable slices over the same bytes. Allocations never overlap (the bump pointer only
//! moves forward within a step), so the only way to get the same bytes twice is to rewind the
//! slab while the first slice is alive, and that needs `&mut Slab`, which a live slice
//! forbids:
//!
//! ```compile_fail,E0499
//! use core::mem::MaybeUninit;
//! use planner_rt::slab::Slab;
//!
//! let mut region = [MaybeUninit::<u8>::uninit(); 64];
//! let mut slab = Slab::new(&mut region);
//! slab.scope(|outer| {
//!     let a = outer.alloc::<u8>(16).unwrap();
//!     // A second step on the same slab would reset it and hand out `a`'s bytes again.
//!     slab.scope(|inner| {
//!         let b = inner.alloc::<u8>(16).unwrap();
//!         b[0] = 2;
//!     });
//!     a[0] = 1;
//! });
//! ```
//!
//! Inside a step the scope only lends `&Slab`, so it cannot be rewound early either:
//!
//! ```compile_fail,E0596
//! use core::mem::MaybeUninit;
//! use planner_rt::slab::Slab;
//!
//! let mut region = [MaybeUninit::<u8>::uninit(); 64];
//! let mut slab = Slab::new(&mut region);
//! slab.scope(|s| {
//!     let a = s.alloc::<u8>(16).unwrap();
//!     s.reset(); // error: cannot borrow data in dereference of `StepScope` as mutable
//!     let b = s.alloc::<u8>(16).unwrap(); // would be `a`'s bytes
//!     a[0] = b[0];
//! });
//! ```
//!
//! Sharing one slab between threads would let two threads bump the same pointer and receive
//! the same bytes, so a `Slab` is `Send` but not `Sync`:
//!
//! ```compile_fail,E0277
//! use planner_rt::slab::Slab;
//!
//! fn shared_between_threads<T: Sync>() {}
//! shared_between_threads::<Slab<'static>>();
//! ```
//!
//! Zero-filled allocation is only offered for types whose all-zero bytes are a valid value:
//!
//! ```compile_fail,E0277
//! use core::mem::MaybeUninit;
//! use planner_rt::slab::Slab;
//!
//! let mut region = [MaybeUninit::<u8>::uninit(); 64];
//! let slab = Slab::new(&mut region);
//! let refs = slab.alloc::<&'static u8>(4); // a null reference is never valid
//! ```
//!
//! # The figures
//!
//! Every size below counts bytes from the start of the region, padding included, so it is
//! the slab capacity that would have been enough:
//!
//! - [`Slab::used`]: the bytes taken in the current step.
//! - [`Slab::requested`]: the bytes the current step asked for, including requests that
//!   failed, as if the slab had no end.
//! - [`Slab::high_water`]: the most bytes any step actually took.
//! - [`Slab::needed`]: the most bytes any step asked for; a slab of exactly this capacity
//!   (with the same base alignment) serves every request the steps made so far.
//! - [`Slab::overflow`]: `needed - capacity` when positive, else 0: the bytes the largest step
//!   asked for beyond the slab.
//!
//! A step that gives up at its first failed allocation makes no further requests, so its
//! `needed` counts the requests up to and including the one that failed. To size a slab in
//! one run, either keep the step going after an [`Overflow`] (skipping the work) or size it
//! with a generous slab first.
//!
//! Padding depends on the region's address: figures are exact for any region whose base is at
//! least as aligned as the most-aligned type allocated from it (a planned arena is aligned to
//! 16 bytes or more).

use core::cell::Cell;
use core::fmt;
use core::marker::PhantomData;
use core::mem::{MaybeUninit, align_of, size_of};
use core::ops::Deref;
use core::ptr::NonNull;

/// Types that [`Slab::alloc`] may hand out zero-filled.
///
/// Implemented for the integer and floating-point primitives, `bool`, `char`, and arrays of
/// any `Zeroable` type. Implement it for your own `#[repr(C)]` or `#[repr(transparent)]`
/// plain-old-data type (a complex number, a fixed-point pair) to allocate it zero-filled.
///
/// # Safety
///
/// The all-zero bit pattern must be a valid value of the type (so no references, no
/// `NonZero*`, no enums without a zero discriminant). `Copy` is required so that a reset,
/// which never runs destructors, cannot leak anything that needed dropping.
pub unsafe trait Zeroable: Copy {}

macro_rules! zeroable {
    ($($t:ty),* $(,)?) => {
        $(
            // SAFETY: all-zero bytes are `0` for integers, `+0.0` for floats, `false` for
            // `bool` and `'\0'` for `char`: valid values of each.
            unsafe impl Zeroable for $t {}
        )*
    };
}

zeroable!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64, bool, char
);

// SAFETY: an array has no bytes besides its elements', so all-zero bytes are an array of
// all-zero elements, each valid by `T: Zeroable`.
unsafe impl<T: Zeroable, const N: usize> Zeroable for [T; N] {}

/// An allocation that did not fit in the slab.
///
/// The slab is left as it was: the slices handed out before stay valid and later, smaller
/// requests may still fit. The request is counted in [`Slab::requested`] and [`Slab::needed`]
/// all the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow {
    size: usize,
    align: usize,
    free: usize,
    capacity: usize,
    step_needed: usize,
}

impl Overflow {
    /// The bytes the failed request asked for, without padding (saturated at `usize::MAX`
    /// when the element count times the element size does not fit in a `usize`).
    pub fn size(&self) -> usize {
        self.size
    }

    /// The alignment the failed request asked for, in bytes.
    pub fn align(&self) -> usize {
        self.align
    }

    /// The bytes that were still free in the slab when the request failed.
    pub fn free(&self) -> usize {
        self.free
    }

    /// The capacity of the slab, in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The bytes the current step had asked for, this request and its padding included: the
    /// capacity that would have served the step so far.
    pub fn step_needed(&self) -> usize {
        self.step_needed
    }
}

impl fmt::Display for Overflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "slab overflow: a request for {} bytes (align {}) found {} of {} bytes free; \
             this step needs at least {} bytes, give the slab at least that many",
            self.size, self.align, self.free, self.capacity, self.step_needed
        )
    }
}

impl core::error::Error for Overflow {}

/// [`Slab::retain`] was given a destination whose length differs from the result's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LengthMismatch {
    source: usize,
    destination: usize,
}

impl LengthMismatch {
    /// The number of elements in the result being retained.
    pub fn source_len(&self) -> usize {
        self.source
    }

    /// The number of elements in the destination.
    pub fn destination_len(&self) -> usize {
        self.destination
    }
}

impl fmt::Display for LengthMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot retain a result of {} elements into a destination of {}; \
             give a destination of exactly {} elements",
            self.source, self.destination, self.source
        )
    }
}

impl core::error::Error for LengthMismatch {}

/// A bump allocator over one byte region, reset at every step boundary.
///
/// Allocation takes `&self` and returns a slice borrowed from that `&self`; [`Slab::reset`]
/// takes `&mut self`, so it cannot be called while any slice is alive. Allocations never
/// overlap: within a step the bump pointer only moves forward.
///
/// The region is any `&mut [MaybeUninit<u8>]` ([`Slab::new`]): a stack array, a static
/// buffer handed out once, or an arena reserved by the plan.
pub struct Slab<'buf> {
    /// Start of the region; its provenance covers all `capacity` bytes.
    base: NonNull<u8>,
    capacity: usize,
    /// Bytes taken in this step, padding included.
    used: Cell<usize>,
    /// Bytes asked for in this step as if the slab had no end, padding included.
    requested: Cell<usize>,
    high_water: Cell<usize>,
    needed: Cell<usize>,
    failed: Cell<usize>,
    /// The slab holds the region's exclusive borrow for `'buf`.
    region: PhantomData<&'buf mut [MaybeUninit<u8>]>,
}

// SAFETY: a `Slab` is the exclusive owner of its region for `'buf`, like the
// `&'buf mut [MaybeUninit<u8>]` it was built from, which is `Send`; moving it to another
// thread moves that exclusive access with it. It stays `!Sync` (its `Cell`s), so two threads
// can never bump the same pointer.
unsafe impl Send for Slab<'_> {}

impl<'buf> Slab<'buf> {
    /// A slab over `region`, for as long as `region` is borrowed.
    ///
    /// The bytes may be uninitialised. The region is typed `MaybeUninit<u8>` because the slab
    /// may leave uninitialised bytes behind (through [`Slab::alloc_uninit`], or the padding
    /// of a `Zeroable` struct), which a `&mut [u8]` could read back once the slab is gone;
    /// that is why there is no constructor from `&mut [u8]`, not even a `'static` one
    /// (`Box::from_raw` can recover a leaked buffer).
    pub fn new(region: &'buf mut [MaybeUninit<u8>]) -> Self {
        let capacity = region.len();
        Slab {
            base: NonNull::from(region).cast::<u8>(),
            capacity,
            used: Cell::new(0),
            requested: Cell::new(0),
            high_water: Cell::new(0),
            needed: Cell::new(0),
            failed: Cell::new(0),
            region: PhantomData,
        }
    }

    /// The capacity of the slab, in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The bytes taken in the current step, padding included.
    pub fn used(&self) -> usize {
        self.used.get()
    }

    /// The bytes still free in the current step (before any padding the next request needs).
    pub fn remaining(&self) -> usize {
        self.capacity - self.used.get()
    }

    /// The bytes the current step asked for, padding and failed requests included, as if the
    /// slab had no end. Equal to [`Slab::used`] until a request fails.
    pub fn requested(&self) -> usize {
        self.requested.get()
    }

    /// The most bytes any step took since the slab was made (never more than the capacity).
    pub fn high_water(&self) -> usize {
        self.high_water.get()
    }

    /// The most bytes any step asked for since the slab was made, padding and failed requests
    /// included: a slab of this capacity serves every request made so far.
    pub fn needed(&self) -> usize {
        self.needed.get()
    }

    /// The bytes the largest step asked for beyond the slab: `needed() - capacity()`, or 0
    /// when every request fitted.
    pub fn overflow(&self) -> usize {
        self.needed.get().saturating_sub(self.capacity)
    }

    /// How many allocations returned [`Overflow`] since the slab was made.
    pub fn failed_allocations(&self) -> usize {
        self.failed.get()
    }

    /// Ends the current step: every byte becomes free again.
    ///
    /// Takes `&mut self`, so no slice allocated before can still be in use. The high-water
    /// mark, `needed` and the failure count are kept.
    pub fn reset(&mut self) {
        *self.used.get_mut() = 0;
        *self.requested.get_mut() = 0;
    }

    /// Starts a step that ends, with a [`Slab::reset`], when the returned guard is dropped.
    ///
    /// The guard dereferences to `&Slab`: allocate through it; slices borrow the guard, so they
    /// cannot outlive the step.
    pub fn step(&mut self) -> StepScope<'_, 'buf> {
        StepScope { slab: self }
    }

    /// Runs one step: `f` allocates from the scope it is given, and the slab is reset when `f`
    /// returns (or unwinds).
    ///
    /// `f` cannot return a slice of the slab: its result type is chosen outside the closure,
    /// so it cannot name the scope's borrow. Copy a result out with [`Slab::retain`] or return
    /// an owned value.
    pub fn scope<R>(&mut self, f: impl FnOnce(&StepScope<'_, 'buf>) -> R) -> R {
        let step = self.step();
        f(&step)
    }

    /// Takes `n` zero-filled values of `T`, aligned for `T`.
    ///
    /// # Errors
    ///
    /// [`Overflow`] when the slab does not have `n * size_of::<T>()` bytes (plus padding) free;
    /// the slab and every slice handed out before are left as they were.
    #[allow(clippy::mut_from_ref)] // each call hands out fresh bytes, never an alias
    pub fn alloc<T: Zeroable>(&self, n: usize) -> Result<&mut [T], Overflow> {
        let ptr = self.reserve::<T>(n)?;
        // SAFETY: `reserve` returned room for `n` values of `T`, aligned, inside the region,
        // that no slice alive covers (or a dangling aligned pointer when that room is 0 bytes);
        // all-zero bytes are a valid `T` by the `Zeroable` contract, so after the write the
        // `n` values are initialised. The slice borrows `&self`, which `reset` cannot outlive.
        unsafe {
            ptr.as_ptr().write_bytes(0, n);
            Ok(core::slice::from_raw_parts_mut(ptr.as_ptr(), n))
        }
    }

    /// Takes room for `n` values of `T`, aligned for `T`, left uninitialised.
    ///
    /// For buffers that are fully written before they are read, to skip the zero fill of
    /// [`Slab::alloc`]. [`Slab::alloc_with`] initialises without `unsafe` in the caller.
    ///
    /// # Errors
    ///
    /// [`Overflow`] as for [`Slab::alloc`].
    #[allow(clippy::mut_from_ref)] // each call hands out fresh bytes, never an alias
    pub fn alloc_uninit<T: Copy>(&self, n: usize) -> Result<&mut [MaybeUninit<T>], Overflow> {
        let ptr = self.reserve::<T>(n)?;
        // SAFETY: `reserve` returned room for `n` values of `T`, aligned, inside the region,
        // that no slice alive covers; `MaybeUninit<T>` has `T`'s layout and needs no
        // initialisation.
        unsafe {
            Ok(core::slice::from_raw_parts_mut(
                ptr.as_ptr().cast::<MaybeUninit<T>>(),
                n,
            ))
        }
    }

    /// Takes `n` values of `T`, each set to `value`.
    ///
    /// # Errors
    ///
    /// [`Overflow`] as for [`Slab::alloc`].
    #[allow(clippy::mut_from_ref)] // each call hands out fresh bytes, never an alias
    pub fn alloc_fill<T: Copy>(&self, n: usize, value: T) -> Result<&mut [T], Overflow> {
        self.alloc_with(n, |_| value)
    }

    /// Takes `n` values of `T`, the `i`-th set to `f(i)`.
    ///
    /// `f` may allocate from the same slab: the room for these `n` values is taken before `f`
    /// first runs.
    ///
    /// # Errors
    ///
    /// [`Overflow`] as for [`Slab::alloc`]; `f` is not called then.
    #[allow(clippy::mut_from_ref)] // each call hands out fresh bytes, never an alias
    pub fn alloc_with<T: Copy>(
        &self,
        n: usize,
        mut f: impl FnMut(usize) -> T,
    ) -> Result<&mut [T], Overflow> {
        let ptr = self.reserve::<T>(n)?;
        for i in 0..n {
            // SAFETY: `i < n`, so `ptr.add(i)` stays inside the `n` reserved values (or is the
            // dangling pointer of a zero-sized `T`, valid for zero-sized writes). The room is
            // already taken from the bump pointer, so an allocation `f` makes lands elsewhere.
            unsafe { ptr.as_ptr().add(i).write(f(i)) };
        }
        // SAFETY: all `n` values were written above; the room is aligned, inside the region,
        // and no other slice covers it.
        unsafe { Ok(core::slice::from_raw_parts_mut(ptr.as_ptr(), n)) }
    }

    /// Takes a copy of `src`.
    ///
    /// # Errors
    ///
    /// [`Overflow`] as for [`Slab::alloc`].
    #[allow(clippy::mut_from_ref)] // each call hands out fresh bytes, never an alias
    pub fn alloc_copy<T: Copy>(&self, src: &[T]) -> Result<&mut [T], Overflow> {
        let ptr = self.reserve::<T>(src.len())?;
        // SAFETY: `reserve` returned room for `src.len()` values of `T`, aligned and inside the
        // region. That room is not covered by any live slice, and `src` is live, so the two do
        // not overlap. After the copy every value is initialised.
        unsafe {
            core::ptr::copy_nonoverlapping(src.as_ptr(), ptr.as_ptr(), src.len());
            Ok(core::slice::from_raw_parts_mut(ptr.as_ptr(), src.len()))
        }
    }

    /// Copies a step's result into `dst`, which outlives the step (a persistent tensor, an
    /// array owned by the caller), and returns `dst`.
    ///
    /// This is the one sanctioned way for data to survive a reset: slices of the slab cannot.
    ///
    /// # Errors
    ///
    /// [`LengthMismatch`] when `dst.len() != src.len()`; nothing is copied then.
    pub fn retain<'d, T: Copy>(
        &self,
        src: &[T],
        dst: &'d mut [T],
    ) -> Result<&'d mut [T], LengthMismatch> {
        if src.len() != dst.len() {
            return Err(LengthMismatch {
                source: src.len(),
                destination: dst.len(),
            });
        }
        dst.copy_from_slice(src);
        Ok(dst)
    }

    /// Moves the bump pointer past room for `n` values of `T` and returns the room's start.
    ///
    /// On success the returned pointer is aligned for `T`, carries the region's provenance,
    /// and the `n * size_of::<T>()` bytes from it lie inside the region, past every byte
    /// handed out since the last reset. When that size is 0 the pointer is dangling (aligned,
    /// non-null) and nothing is counted.
    fn reserve<T>(&self, n: usize) -> Result<NonNull<T>, Overflow> {
        let size = n.saturating_mul(size_of::<T>());
        if size == 0 {
            return Ok(NonNull::dangling());
        }
        let align = align_of::<T>();
        let base = self.base.as_ptr().addr();

        // What an endless slab would have given: this is what makes `needed` exact.
        let requested = self.requested.get();
        let wanted_end = requested
            .saturating_add(padding(base.wrapping_add(requested), align))
            .saturating_add(size);
        self.requested.set(wanted_end);
        self.needed.set(self.needed.get().max(wanted_end));

        let used = self.used.get();
        let start = used.saturating_add(padding(base.wrapping_add(used), align));
        let end = start.saturating_add(size);
        if end > self.capacity {
            self.failed.set(self.failed.get().saturating_add(1));
            return Err(Overflow {
                size,
                align,
                free: self.capacity - used,
                capacity: self.capacity,
                step_needed: wanted_end,
            });
        }
        self.used.set(end);
        self.high_water.set(self.high_water.get().max(end));
        // SAFETY: `start <= end <= capacity`, so the offset stays inside the region (or one
        // past its end, only when the size is 0, which returned above). `base + start` is a
        // multiple of `align` by construction of `padding`.
        Ok(unsafe { self.base.add(start) }.cast::<T>())
    }
}

/// The bytes to add to `addr` to make it a multiple of `align` (a power of two).
fn padding(addr: usize, align: usize) -> usize {
    addr.wrapping_neg() & (align - 1)
}

/// Runs `f` with a slab over initialised bytes (a tensor of the plan, such as a slab that
/// `memory.slabs` reserves, or any `&mut [u8]`), and zeroes the bytes again before returning.
///
/// [`Slab::new`] takes `MaybeUninit<u8>` because a slab may leave bytes uninitialised; here
/// the bytes are handed back zeroed when `f` returns or unwinds, so whoever reads them
/// through `bytes` afterwards (the model's own tensor views, for a scratch slab that shares
/// the scratch arena between runs) only ever sees initialised bytes. Nothing `f` allocates
/// can outlive it: `R` cannot borrow the slab.
///
/// ```
/// use planner_rt::slab::with_bytes;
/// #[repr(align(16))]
/// struct Aligned([u8; 64]);
/// let mut arena = Aligned([7; 64]);
/// let needed = with_bytes(&mut arena.0, |slab| {
///     slab.scope(|s| {
///         let frame = s.alloc::<i16>(8).unwrap();
///         frame[0] = -3;
///     });
///     slab.needed()
/// });
/// assert_eq!(needed, 16);
/// assert!(arena.0.iter().all(|&b| b == 0));
/// ```
pub fn with_bytes<R>(bytes: &mut [u8], f: impl FnOnce(&mut Slab<'_>) -> R) -> R {
    /// Zeroes the region on drop, so it runs on return and on unwind alike.
    struct Rezero {
        ptr: *mut u8,
        len: usize,
    }
    impl Drop for Rezero {
        fn drop(&mut self) {
            // SAFETY: `ptr` and `len` come from the `&mut [u8]` that `with_bytes` holds
            // borrowed for its whole run; the slab built over it is gone by now (it is dropped
            // before this guard on return, and unwinding drops it first too, since it was
            // created after the guard), so this is the only access.
            unsafe { core::ptr::write_bytes(self.ptr, 0, self.len) }
        }
    }
    let len = bytes.len();
    let ptr = bytes.as_mut_ptr();
    let guard = Rezero { ptr, len };
    // SAFETY: `MaybeUninit<u8>` has the size, alignment and validity-superset of `u8`, and
    // the pointer covers `len` bytes borrowed mutably for this call. Bytes the slab leaves
    // uninitialised are never read as `u8`: `guard` writes zeros over the whole region before
    // the borrow of `bytes` ends, on return and on unwind.
    let region = unsafe { core::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<u8>>(), len) };
    let r = f(&mut Slab::new(region));
    // The slab (a temporary) is gone; zero the region before the borrow of `bytes` ends.
    drop(guard);
    r
}

impl fmt::Debug for Slab<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slab")
            .field("capacity", &self.capacity)
            .field("used", &self.used.get())
            .field("requested", &self.requested.get())
            .field("high_water", &self.high_water.get())
            .field("needed", &self.needed.get())
            .field("failed_allocations", &self.failed.get())
            .finish()
    }
}

/// One step on a [`Slab`]: dereferences to the slab for allocation, and resets it when dropped.
///
/// Made by [`Slab::step`], or given to the closure of [`Slab::scope`]. It lends only `&Slab`,
/// so the step cannot be rewound while its slices are alive.
///
/// ```
/// use core::mem::MaybeUninit;
/// use planner_rt::slab::Slab;
///
/// let mut region = [MaybeUninit::<u8>::uninit(); 64];
/// let mut slab = Slab::new(&mut region);
/// {
///     let step = slab.step();
///     let frame = step.alloc::<u8>(16).unwrap();
///     frame[0] = 7;
///     assert_eq!(step.used(), 16);
/// } // the step ends here
/// assert_eq!(slab.used(), 0);
/// assert_eq!(slab.high_water(), 16);
/// ```
///
/// A slice cannot outlive its step:
///
/// ```compile_fail,E0505
/// use core::mem::MaybeUninit;
/// use planner_rt::slab::Slab;
///
/// let mut region = [MaybeUninit::<u8>::uninit(); 64];
/// let mut slab = Slab::new(&mut region);
/// let step = slab.step();
/// let frame = step.alloc::<i16>(16).unwrap();
/// drop(step); // error: cannot move out of `step` because it is borrowed
/// frame[0] = 7;
/// ```
pub struct StepScope<'s, 'buf> {
    slab: &'s mut Slab<'buf>,
}

impl<'buf> Deref for StepScope<'_, 'buf> {
    type Target = Slab<'buf>;

    fn deref(&self) -> &Slab<'buf> {
        self.slab
    }
}

impl Drop for StepScope<'_, '_> {
    fn drop(&mut self) {
        self.slab.reset();
    }
}

impl fmt::Debug for StepScope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StepScope").field(&*self.slab).finish()
    }
}

#[cfg(test)]
mod tests;
