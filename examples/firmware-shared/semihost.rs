//! How both firmware examples (`firmware-m55`, `firmware-m4f`) end a run over semihosting:
//! [`fail`], [`exit`], and the HardFault and panic handlers, which report and stop QEMU with
//! a failure status (the default handlers would spin forever). Each firmware's `main.rs`
//! includes this file with `#[path]` and names itself in `NAME`, the prefix of the messages.

use cortex_m_rt::{ExceptionFrame, exception};
use cortex_m_semihosting::{debug, hprintln};

use super::NAME;

/// Reports `why` and ends the run with status 1.
pub fn fail(why: &str) -> ! {
    hprintln!("{}: FAILED: {}", NAME, why);
    exit(debug::EXIT_FAILURE)
}

/// Ends the QEMU session with `status` (semihosting `SYS_EXIT`).
pub fn exit(status: debug::ExitStatus) -> ! {
    debug::exit(status);
    // Only reached when no debugger listens for semihosting (a board without one).
    loop {
        cortex_m::asm::wfi();
    }
}

/// Reports the faulting frame and stops QEMU with a failure status. cortex-m-rt requires a
/// HardFault handler to be an `unsafe fn`; its body does nothing unsafe.
#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    hprintln!("{}: hard fault: {:?}", NAME, frame);
    exit(debug::EXIT_FAILURE)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("{}: panic: {}", NAME, info);
    exit(debug::EXIT_FAILURE)
}
