//! planner's Cortex-M55 firmware example: boots on QEMU's `mps3-an547` machine
//! and reports over semihosting; the exit status is QEMU's.

#![no_std]
#![no_main]

use cortex_m_rt::{ExceptionFrame, entry, exception};
use cortex_m_semihosting::{debug, hprintln};

#[entry]
fn main() -> ! {
    hprintln!("firmware-m55: booted");
    #[cfg(feature = "fault-selftest")]
    fault_selftest();
    exit(debug::EXIT_SUCCESS)
}

/// Ends the QEMU session with `status` (semihosting `SYS_EXIT`).
fn exit(status: debug::ExitStatus) -> ! {
    debug::exit(status);
    // Only reached when no debugger listens for semihosting.
    loop {
        cortex_m::asm::wfi();
    }
}

/// Reads an address no memory or device answers: a bus fault, escalated to HardFault.
#[cfg(feature = "fault-selftest")]
fn fault_selftest() {
    hprintln!("firmware-m55: reading 0xf000_0000 to fault on purpose");
    // SAFETY: the address is unmapped on mps3-an547, so the read faults before it returns
    // anything; nothing else is touched.
    let _ = unsafe { core::ptr::read_volatile(0xf000_0000 as *const u32) };
}

/// Reports the faulting frame and stops QEMU with a failure status; the
/// default handler would spin forever.
#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    hprintln!("firmware-m55: hard fault: {:?}", frame);
    exit(debug::EXIT_FAILURE)
}

/// Any other exception or interrupt is unexpected in this firmware.
#[exception]
unsafe fn DefaultHandler(irqn: i16) {
    hprintln!("firmware-m55: unexpected exception {}", irqn);
    exit(debug::EXIT_FAILURE)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("firmware-m55: panic: {}", info);
    exit(debug::EXIT_FAILURE)
}
