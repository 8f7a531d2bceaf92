//! planner's Cortex-M55 firmware example: boots on QEMU's `mps3-an547` machine
//! and reports over semihosting; the exit status is QEMU's.

#![no_std]
#![no_main]

use cortex_m_rt::{ExceptionFrame, entry, exception};
use cortex_m_semihosting::{debug, hprintln};

#[entry]
fn main() -> ! {
    hprintln!("firmware-m55: booted");
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
