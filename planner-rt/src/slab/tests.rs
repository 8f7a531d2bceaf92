#[test]
fn with_bytes_zeroes_the_region_after_use() {
    // Aligned, so the figures do not depend on where the stack puts the buffer.
    #[repr(align(16))]
    struct Aligned([u8; 48]);
    let mut buf = Aligned([0xAA; 48]);
    let bytes = &mut buf.0;
    let (high, overflow) = super::with_bytes(bytes, |slab| {
        slab.scope(|s| {
            let a = s.alloc_uninit::<u32>(4).unwrap();
            a[0] = core::mem::MaybeUninit::new(7);
            assert!(s.alloc::<u8>(40).is_err());
        });
        (slab.high_water(), slab.overflow())
    });
    assert_eq!((high, overflow), (16, 8));
    assert!(bytes.iter().all(|&b| b == 0));
}

extern crate std;

use super::*;
use std::string::ToString;
use std::vec::Vec;

/// A region whose base is 64-byte aligned, so padding does not depend on where the test
/// happens to put it.
#[repr(C, align(64))]
struct Region<const N: usize>([MaybeUninit<u8>; N]);

impl<const N: usize> Region<N> {
    fn new() -> Self {
        Region([MaybeUninit::uninit(); N])
    }
}

/// Runs `f` on a slab over a fresh `N`-byte [`Region`].
fn on_slab<const N: usize>(f: impl FnOnce(&mut Slab<'_>)) {
    let mut region = Region::<N>::new();
    f(&mut Slab::new(&mut region.0));
}

fn range<T>(s: &[T]) -> core::ops::Range<usize> {
    let start = s.as_ptr().addr();
    start..start + core::mem::size_of_val(s)
}

#[test]
fn allocations_are_zeroed_aligned_and_disjoint() {
    let mut region = Region::<256>::new();
    let slab = Slab::new(&mut region.0);
    let a = slab.alloc::<u8>(3).unwrap();
    let b = slab.alloc::<u32>(5).unwrap();
    let c = slab.alloc::<u16>(1).unwrap();
    let d = slab.alloc::<f64>(2).unwrap();
    assert!(a.iter().all(|&x| x == 0));
    assert!(b.iter().all(|&x| x == 0));
    assert!(d.iter().all(|&x| x == 0.0));
    assert_eq!(b.as_ptr().addr() % align_of::<u32>(), 0);
    assert_eq!(d.as_ptr().addr() % align_of::<f64>(), 0);
    let ranges = [range(a), range(b), range(c), range(d)];
    for (i, x) in ranges.iter().enumerate() {
        for y in &ranges[i + 1..] {
            assert!(x.end <= y.start || y.end <= x.start, "{x:?} overlaps {y:?}");
        }
    }
    // Write every slice, then read back: no write clobbered another slice.
    a.fill(0xAA);
    b.fill(0xBBBB_BBBB);
    c.fill(0xCCCC);
    d.fill(1.5);
    assert!(a.iter().all(|&x| x == 0xAA));
    assert!(b.iter().all(|&x| x == 0xBBBB_BBBB));
    assert!(c.iter().all(|&x| x == 0xCCCC));
    assert!(d.iter().all(|&x| x == 1.5));
    // 3 bytes, pad to 4, 20 bytes (to 24), 2 bytes (to 26), pad to 32, 16 bytes.
    assert_eq!(slab.used(), 48);
    assert_eq!(slab.high_water(), 48);
    assert_eq!(slab.needed(), 48);
    assert_eq!(slab.overflow(), 0);
}

#[test]
fn reset_hands_the_same_bytes_out_again() {
    on_slab::<64>(|slab| {
        let first = {
            let a = slab.alloc::<u8>(16).unwrap();
            a.fill(9);
            range(a)
        };
        slab.reset();
        assert_eq!(slab.used(), 0);
        let b = slab.alloc::<u8>(16).unwrap();
        assert_eq!(range(b), first);
        assert!(b.iter().all(|&x| x == 0), "alloc zero-fills reused bytes");
        assert_eq!(slab.high_water(), 16);
    });
}

#[test]
fn overflow_leaves_earlier_slices_valid_and_reports_the_exact_size() {
    on_slab::<100>(|slab| {
        let a = slab.alloc_fill::<u8>(10, 1).unwrap();
        let b = slab.alloc_fill::<u32>(10, 2).unwrap(); // pad 2, then 40 bytes: to 52
        let err = slab.alloc::<u64>(10).unwrap_err(); // pad 4 (to 56), then 80: to 136
        assert_eq!(err.size(), 80);
        assert_eq!(err.align(), 8);
        assert_eq!(err.free(), 48);
        assert_eq!(err.capacity(), 100);
        assert_eq!(err.step_needed(), 136);
        // Earlier slices are untouched and still usable.
        assert!(a.iter().all(|&x| x == 1));
        assert!(b.iter().all(|&x| x == 2));
        a[0] = 3;
        b[9] = 4;
        // A smaller request still fits in what is left; the endless slab counts it after the
        // failed one.
        let c = slab.alloc::<u16>(4).unwrap(); // real: 52..60; endless: 136..144
        c.fill(5);
        assert_eq!(slab.used(), 60);
        assert_eq!(slab.requested(), 144);
        assert_eq!(slab.high_water(), 60);
        assert_eq!(slab.needed(), 144);
        assert_eq!(slab.overflow(), 44);
        assert_eq!(slab.failed_allocations(), 1);
        assert_eq!((a[0], b[9], c[3]), (3, 4, 5));
        slab.reset();
        // The figures survive the reset; a smaller step does not lower them.
        slab.alloc::<u8>(8).unwrap();
        assert_eq!(slab.needed(), 144);
        assert_eq!(slab.overflow(), 44);
        assert_eq!(slab.requested(), 8);

        // A slab of exactly `needed` bytes serves the same step with no failure.
        let mut exact = Region::<144>::new();
        let slab = Slab::new(&mut exact.0);
        slab.alloc::<u8>(10).unwrap();
        slab.alloc::<u32>(10).unwrap();
        slab.alloc::<u64>(10).unwrap();
        slab.alloc::<u16>(4).unwrap();
        assert_eq!((slab.used(), slab.needed(), slab.overflow()), (144, 144, 0));
    });
}

#[test]
fn overflow_message_says_the_size_to_give() {
    let mut region = Region::<8>::new();
    let slab = Slab::new(&mut region.0);
    let err = slab.alloc::<u32>(4).unwrap_err();
    assert_eq!(
        err.to_string(),
        "slab overflow: a request for 16 bytes (align 4) found 8 of 8 bytes free; \
         this step needs at least 16 bytes, give the slab at least that many"
    );
}

/// Deterministic pseudo-random numbers (no dependency, fast under Miri).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize % bound
    }
}

#[derive(Clone, Copy, Debug)]
enum Req {
    U8(usize),
    U16(usize),
    U32(usize),
    U64(usize),
}

/// Runs `steps` on a slab of `cap` bytes, returning (failures, needed, high water).
fn run(steps: &[Vec<Req>], cap: usize) -> (usize, usize, usize) {
    let mut region = Region::<512>::new();
    let mut slab = Slab::new(&mut region.0[..cap]);
    for step in steps {
        slab.scope(|s| {
            for r in step {
                // Write every successful slice so Miri checks the bytes really are ours.
                match *r {
                    Req::U8(n) => s.alloc::<u8>(n).map(|x| x.fill(1)),
                    Req::U16(n) => s.alloc::<u16>(n).map(|x| x.fill(2)),
                    Req::U32(n) => s.alloc::<u32>(n).map(|x| x.fill(3)),
                    Req::U64(n) => s.alloc::<u64>(n).map(|x| x.fill(4)),
                }
                .ok();
            }
        });
    }
    (slab.failed_allocations(), slab.needed(), slab.high_water())
}

#[test]
fn needed_is_exactly_the_capacity_that_serves_every_step() {
    let mut rng = Lcg(7);
    for _ in 0..24 {
        let steps: Vec<Vec<Req>> = (0..3)
            .map(|_| {
                (0..1 + rng.next(6))
                    .map(|_| match rng.next(4) {
                        0 => Req::U8(rng.next(40)),
                        1 => Req::U16(rng.next(20)),
                        2 => Req::U32(rng.next(12)),
                        _ => Req::U64(rng.next(6)),
                    })
                    .collect()
            })
            .collect();
        let small = 1 + rng.next(64);
        let (_, needed, high) = run(&steps, small);
        assert!(high <= small && high <= needed);
        if needed > 0 {
            assert!(needed <= 512, "test region too small for {steps:?}");
            let (failures, again, _) = run(&steps, needed);
            assert_eq!(failures, 0, "{steps:?} on {needed} bytes");
            assert_eq!(again, needed);
            let (failures, _, _) = run(&steps, needed - 1);
            assert!(failures > 0, "{steps:?} fitted in {} bytes", needed - 1);
        }
    }
}

#[test]
fn zero_sized_requests_take_nothing() {
    let mut region = Region::<0>::new();
    let slab = Slab::new(&mut region.0);
    assert_eq!(slab.alloc::<u32>(0).unwrap().len(), 0);
    assert_eq!(slab.alloc::<[u8; 0]>(1000).unwrap().len(), 1000);
    assert_eq!(slab.alloc_copy::<u8>(&[]).unwrap().len(), 0);
    assert_eq!((slab.used(), slab.needed()), (0, 0));
    assert!(slab.alloc::<u8>(1).is_err());
    assert_eq!(slab.overflow(), 1);
}

#[test]
fn huge_requests_fail_without_wrapping() {
    let mut region = Region::<32>::new();
    let slab = Slab::new(&mut region.0);
    let a = slab.alloc::<u8>(4).unwrap();
    let err = slab.alloc::<u64>(usize::MAX / 4).unwrap_err();
    assert_eq!(err.size(), usize::MAX);
    assert_eq!(slab.needed(), usize::MAX);
    assert_eq!(slab.overflow(), usize::MAX - 32);
    // The bump pointer did not move, so the next request still fits.
    let b = slab.alloc::<u8>(4).unwrap();
    a.fill(1);
    b.fill(2);
    assert_eq!(slab.used(), 8);
    assert!(slab.alloc_uninit::<u16>(usize::MAX).is_err());
}

#[test]
fn scope_and_step_reset_at_the_end() {
    on_slab::<64>(|slab| {
        let sum: u32 = slab.scope(|s| {
            let a = s.alloc_with(8, |i| i as u32).unwrap();
            a.iter().sum()
        });
        assert_eq!(sum, 28);
        assert_eq!((slab.used(), slab.high_water()), (0, 32));
        {
            let step = slab.step();
            step.alloc::<u8>(40).unwrap();
            assert_eq!(step.used(), 40);
        }
        assert_eq!((slab.used(), slab.high_water()), (0, 40));
    });
}

#[test]
fn a_forgotten_step_never_rewinds() {
    on_slab::<64>(|slab| {
        let step = slab.step();
        step.alloc::<u8>(16).unwrap();
        core::mem::forget(step);
        // No reset happened, so the next bytes are past the first allocation.
        assert_eq!(slab.used(), 16);
        let b = slab.alloc::<u8>(16).unwrap();
        assert_eq!(b.as_ptr().addr() - region_start(slab), 16);
    });
}

fn region_start(slab: &Slab<'_>) -> usize {
    slab.base.as_ptr().addr()
}

#[test]
fn alloc_with_may_allocate_inside_its_closure() {
    let mut region = Region::<64>::new();
    let slab = Slab::new(&mut region.0);
    let mut inner = Vec::new();
    let outer = slab
        .alloc_with(4, |i| {
            let t = slab.alloc_fill::<u8>(2, i as u8).unwrap();
            inner.push(range(t));
            u32::from(t[0]) * 10
        })
        .unwrap();
    assert_eq!(outer, [0, 10, 20, 30]);
    for r in &inner {
        assert!(r.start >= range(outer).end || r.end <= range(outer).start);
    }
    assert_eq!(slab.used(), 16 + 8);
}

#[test]
fn uninit_copy_and_retain() {
    on_slab::<64>(|slab| {
        let mut kept = [0i8; 4];
        slab.scope(|s| {
            let raw = s.alloc_uninit::<i8>(4).unwrap();
            for (i, v) in raw.iter_mut().enumerate() {
                v.write(-(i as i8));
            }
            // SAFETY: every element was written just above.
            let values: [i8; 4] = core::array::from_fn(|i| unsafe { raw[i].assume_init() });
            let copy = s.alloc_copy(&values).unwrap();
            copy[0] = 100;
            let err = s.retain(copy, &mut kept[..3]).unwrap_err();
            assert_eq!((err.source_len(), err.destination_len()), (4, 3));
            assert_eq!(
                err.to_string(),
                "cannot retain a result of 4 elements into a destination of 3; \
                 give a destination of exactly 4 elements"
            );
            s.retain(copy, &mut kept).unwrap();
        });
        assert_eq!(kept, [100, -1, -2, -3]);
    });
}

/// A static buffer handed out once, the way a planned arena is.
struct TakeOnce {
    taken: core::sync::atomic::AtomicBool,
    bytes: core::cell::UnsafeCell<[MaybeUninit<u8>; 32]>,
}

// SAFETY: the bytes are only reached through `take`, which hands out at most one
// reference, ever.
unsafe impl Sync for TakeOnce {}

impl TakeOnce {
    #[allow(clippy::mut_from_ref)] // the bytes are handed out once, never aliased
    fn take(&'static self) -> Option<&'static mut [MaybeUninit<u8>]> {
        use core::sync::atomic::Ordering;
        if self.taken.swap(true, Ordering::AcqRel) {
            return None;
        }
        // SAFETY: the swap above returns `false` exactly once, so this is the only
        // reference to the bytes there will ever be.
        Some(unsafe { &mut *self.bytes.get() })
    }
}

static BUFFER: TakeOnce = TakeOnce {
    taken: core::sync::atomic::AtomicBool::new(false),
    bytes: core::cell::UnsafeCell::new([MaybeUninit::new(0xFF); 32]),
};

#[test]
fn a_static_buffer_taken_once_serves_as_region() {
    let mut slab = Slab::new(BUFFER.take().unwrap());
    assert!(BUFFER.take().is_none());
    assert_eq!(slab.capacity(), 32);
    slab.scope(|s| {
        let raw = s.alloc_uninit::<u8>(8).unwrap();
        raw[0] = MaybeUninit::uninit();
        assert!(s.alloc::<u8>(24).unwrap().iter().all(|&x| x == 0));
    });
    assert_eq!(slab.high_water(), 32);
}

#[test]
fn slab_is_send() {
    fn send<T: Send>(_: &T) {}
    let mut region = Region::<8>::new();
    let slab = Slab::new(&mut region.0);
    send(&slab);
    std::thread::scope(|t| {
        t.spawn(move || slab.alloc::<u8>(8).map(|x| x.len()))
            .join()
            .unwrap()
            .unwrap();
    });
}

#[test]
fn debug_shows_the_figures() {
    on_slab::<16>(|slab| {
        let step = slab.step();
        step.alloc::<u8>(4).unwrap();
        assert_eq!(
            std::format!("{step:?}"),
            "StepScope(Slab { capacity: 16, used: 4, requested: 4, high_water: 4, needed: 4, \
             failed_allocations: 0 })"
        );
    });
}
