//! Time as SysTick ticks of the core clock, counted past the 24-bit counter's wraps.
//!
//! Under QEMU's `-icount shift=0` every guest instruction advances virtual time by 1 ns, and
//! SysTick counts the machine's CPU clock in that time: a tick is `1e9 / CLOCK_HZ`
//! instructions (31.25 at the M55 board's 32 MHz, 40 at the M4 board's 25 MHz).
//! [`calibrate`] measures that ratio on a loop of known length instead of trusting it.

use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::{SCB, SYST};
use cortex_m_rt::exception;

/// The counter's reload value: it counts down from here, 2^24 ticks a wrap.
const RELOAD: u32 = 0x00ff_ffff;

/// Wraps of the counter since [`start`].
static WRAPS: AtomicU32 = AtomicU32::new(0);

#[exception]
fn SysTick() {
    WRAPS.fetch_add(1, Ordering::Relaxed);
}

/// Starts the counter on the core clock, with its wrap interrupt.
pub fn start(mut syst: SYST) {
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(RELOAD);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
}

/// Ticks since [`start`].
pub fn now() -> u64 {
    cortex_m::interrupt::free(|_| {
        let mut value = SYST::get_current();
        let mut wraps = WRAPS.load(Ordering::Relaxed);
        // A wrap whose interrupt is pending (masked here) is not counted yet: read the
        // counter again, after the wrap, and count it.
        if SCB::is_pendst_pending() {
            value = SYST::get_current();
            wraps += 1;
        }
        u64::from(wraps) * u64::from(RELOAD + 1) + u64::from(RELOAD - value)
    })
}

/// Runs a loop of `2 * iterations` instructions (a `subs` and a `bne` each time round).
#[inline(never)]
fn spin(iterations: u32) {
    // SAFETY: the loop only counts r0 down to zero; it touches no memory and no other
    // register, and leaves the flags clobbered, which `asm!` assumes by default.
    unsafe {
        core::arch::asm!(
            "1:",
            "subs {n}, {n}, #1",
            "bne 1b",
            n = inout(reg) iterations => _,
            options(nomem, nostack)
        );
    }
}

/// Instructions per tick, as a fraction, and the ticks two back-to-back [`now`] calls
/// take (subtracted from every measured interval).
#[derive(Clone, Copy, Debug)]
pub struct Calibration {
    /// Instructions in the calibration loop.
    pub instructions: u64,
    /// Ticks it took.
    pub ticks: u64,
    /// Ticks between two [`now`] calls with nothing between them.
    pub overhead: u64,
}

impl Calibration {
    /// `ticks` as instructions, rounded to the nearest.
    pub fn instructions(&self, ticks: u64) -> u64 {
        (ticks * self.instructions + self.ticks / 2) / self.ticks.max(1)
    }
}

/// Measures the instructions per tick on a loop of 20 million instructions, and the
/// overhead of reading the time.
pub fn calibrate() -> Calibration {
    const ITERATIONS: u32 = 10_000_000;
    let mut overhead = u64::MAX;
    for _ in 0..8 {
        let a = now();
        let b = now();
        overhead = overhead.min(b - a);
    }
    let start = now();
    spin(ITERATIONS);
    let ticks = now() - start - overhead;
    Calibration {
        instructions: 2 * u64::from(ITERATIONS),
        ticks,
        overhead,
    }
}
