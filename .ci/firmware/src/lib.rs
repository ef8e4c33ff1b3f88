//! The run-time of the firmware programs: start-up, semihosting, and the
//! measuring tools (section sizes, stack painting, instruction counting).
//!
//! Written for QEMU's `mps2-an386` (Cortex-M4F) with
//! `-semihosting-config enable=on,target=native`: output, the command line and
//! the exit code go through semihosting (`bkpt 0xAB`), which a board without a
//! debugger attached would take as a fault. No allocator, no `alloc`.
#![no_std]

use core::fmt;
use core::ptr::{addr_of, read_volatile, write_volatile};

// --- start-up -------------------------------------------------------------------------
//
// The vector table (initial stack pointer, then the reset handler and the system
// exceptions) and the reset handler, in assembly: nothing in Rust runs before
// .data is copied and .bss zeroed, and the FPU is enabled before the first Rust
// instruction (the target is hard-float). `link.x` places `.vector_table` at
// address 0, where the Cortex-M reads it at reset, and keeps it (`EXTERN`).
core::arch::global_asm!(
    r#"
    .section .vector_table, "a"
    .global __vectors
    .p2align 2
__vectors:
    .word __stack_top
    .word reset
    .word fault_handler     @ NMI
    .word fault_handler     @ HardFault
    .word fault_handler     @ MemManage
    .word fault_handler     @ BusFault
    .word fault_handler     @ UsageFault
    .word 0, 0, 0, 0
    .word fault_handler     @ SVCall
    .word fault_handler     @ DebugMonitor
    .word 0
    .word fault_handler     @ PendSV
    .word fault_handler     @ SysTick (never enabled)

    .section .text.reset, "ax"
    .global reset
    .type reset, %function
    .thumb_func
reset:
    @ Copy .data from its load address in flash to RAM.
    ldr r0, =__sdata
    ldr r1, =__edata
    ldr r2, =__sidata
1:  cmp r0, r1
    bhs 2f
    ldr r3, [r2], #4
    str r3, [r0], #4
    b 1b
    @ Zero .bss.
2:  ldr r0, =__sbss
    ldr r1, =__ebss
    movs r3, #0
3:  cmp r0, r1
    bhs 4f
    str r3, [r0], #4
    b 3b
    @ Full access to the FPU (CPACR: CP10 and CP11).
4:  ldr r0, =0xE000ED88
    ldr r1, [r0]
    orr r1, r1, #0x00F00000
    str r1, [r0]
    dsb
    isb
    bl firmware_main
    udf #0
    .size reset, . - reset
"#
);

/// Any fault or unexpected exception: report it and stop with a failure (not a
/// hang until the CI timeout).
#[unsafe(no_mangle)]
extern "C" fn fault_handler() -> ! {
    println!("FAIL: processor fault or unexpected exception");
    exit(false)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    println!("FAIL: panic: {info}");
    exit(false)
}

// --- semihosting ----------------------------------------------------------------------

/// SYS_WRITE0: writes a NUL-terminated string to the debug console.
const SYS_WRITE0: usize = 0x04;
/// SYS_GET_CMDLINE: the command line (QEMU: the kernel file name and `-append`).
const SYS_GET_CMDLINE: usize = 0x15;
/// SYS_EXIT: ends the program; QEMU exits 0 for ADP_Stopped_ApplicationExit and
/// 1 for any other reason.
const SYS_EXIT: usize = 0x18;
/// ADP_Stopped_ApplicationExit: a normal exit (QEMU exit status 0).
const ADP_STOPPED_APPLICATION_EXIT: usize = 0x20026;
/// ADP_Stopped_RunTimeErrorUnknown: an error exit (QEMU exit status 1).
const ADP_STOPPED_RUN_TIME_ERROR_UNKNOWN: usize = 0x20023;

/// One semihosting call: operation `op` with argument `arg`, returning `r0`.
fn semihosting(op: usize, arg: usize) -> usize {
    let ret;
    // SAFETY: `bkpt 0xAB` is the Arm semihosting trap, serviced by QEMU
    // (`-semihosting-config enable=on`). It reads and writes only the memory
    // that `arg` points to, which every caller owns for the call (the asm is not
    // `nomem`, so the compiler keeps those writes and reads in order); it
    // changes no register but r0 and uses no stack.
    unsafe {
        core::arch::asm!(
            "bkpt 0xAB",
            inout("r0") op => ret,
            in("r1") arg,
            options(nostack, preserves_flags),
        );
    }
    ret
}

/// Ends the program: exit status 0 if `success`, else 1.
pub fn exit(success: bool) -> ! {
    let reason = if success {
        ADP_STOPPED_APPLICATION_EXIT
    } else {
        ADP_STOPPED_RUN_TIME_ERROR_UNKNOWN
    };
    loop {
        semihosting(SYS_EXIT, reason);
    }
}

/// The command line QEMU passes (`<kernel file> <-append text>`), in `buf`;
/// empty if there is none or it does not fit.
pub fn command_line(buf: &mut [u8]) -> &str {
    let mut block = [buf.as_mut_ptr() as usize, buf.len()];
    if semihosting(SYS_GET_CMDLINE, block.as_mut_ptr() as usize) != 0 {
        return "";
    }
    let len = block[1].min(buf.len());
    core::str::from_utf8(&buf[..len]).unwrap_or("")
}

/// The semihosting console, as a `fmt::Write` (through a small buffer, each
/// chunk written with SYS_WRITE0).
pub struct Console {
    buf: [u8; 128],
    len: usize,
}

impl Console {
    /// An empty console buffer.
    pub const fn new() -> Self {
        Self {
            buf: [0; 128],
            len: 0,
        }
    }

    /// Writes out what is buffered.
    pub fn flush(&mut self) {
        if self.len > 0 {
            self.buf[self.len] = 0;
            semihosting(SYS_WRITE0, self.buf.as_ptr() as usize);
            self.len = 0;
        }
    }
}

impl Default for Console {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Write for Console {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            // A NUL would end SYS_WRITE0's string early; none is ever printed.
            let b = if b == 0 { b'?' } else { b };
            if self.len == self.buf.len() - 1 {
                self.flush();
            }
            self.buf[self.len] = b;
            self.len += 1;
        }
        Ok(())
    }
}

/// `println!` to the semihosting console (one flush per line).
#[macro_export]
macro_rules! println {
    ($($arg:tt)*) => {{
        let mut console = $crate::Console::new();
        let _ = core::fmt::Write::write_fmt(&mut console, format_args!($($arg)*));
        let _ = core::fmt::Write::write_str(&mut console, "\n");
        console.flush();
    }};
}

// --- section sizes, from the linker script's symbols ----------------------------------

unsafe extern "C" {
    static __stext: u8;
    static __etext: u8;
    static __srodata: u8;
    static __erodata: u8;
    static __sdata: u8;
    static __edata: u8;
    static __sbss: u8;
    static __ebss: u8;
    static __stack_bottom: u8;
    static __stack_top: u8;
}

/// This program's section sizes in bytes, as linked (`link.x`).
#[derive(Clone, Copy, Debug)]
pub struct Sections {
    /// `.text`: code (the vector table, 64 bytes, is not included).
    pub text: usize,
    /// `.rodata`: constants (tables, string literals, known answers).
    pub rodata: usize,
    /// `.data`: initialised statics (in RAM, and their image in flash).
    pub data: usize,
    /// `.bss`: zero-initialised statics (the stack is not included).
    pub bss: usize,
}

/// The section sizes of the running program.
pub fn sections() -> Sections {
    let span = |start: *const u8, end: *const u8| end as usize - start as usize;
    Sections {
        text: span(addr_of!(__stext), addr_of!(__etext)),
        rodata: span(addr_of!(__srodata), addr_of!(__erodata)),
        data: span(addr_of!(__sdata), addr_of!(__edata)),
        bss: span(addr_of!(__sbss), addr_of!(__ebss)),
    }
}

// --- stack painting --------------------------------------------------------------------

/// The word painted on the free stack.
const PAINT: u32 = 0xC5AC_CE55;

/// The current stack pointer.
#[inline(always)]
fn stack_pointer() -> usize {
    let sp: usize;
    // SAFETY: reads the stack pointer into a register; no memory access.
    unsafe {
        core::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    sp
}

/// The bytes of stack `f` uses at most, itself and everything it calls: the free
/// stack below this frame is painted with a pattern, `f` runs (called through a
/// `dyn` reference, so that it is not inlined into this frame), and the lowest
/// word that no longer holds the pattern marks the deepest use. (A word that
/// happened to be written with the pattern itself would be missed: at most an
/// underestimate by that one word's distance, which is vanishingly unlikely.)
#[inline(never)]
pub fn stack_use(f: &mut dyn FnMut()) -> usize {
    let bottom = addr_of!(__stack_bottom) as usize;
    let top = addr_of!(__stack_top) as usize;
    let sp = stack_pointer();
    assert!(bottom < sp && sp <= top, "stack pointer outside the stack");
    // Paint [bottom, sp): free stack (nothing live below the stack pointer on
    // Arm: there is no red zone, and interrupts are not enabled).
    let mut p = bottom;
    while p < sp {
        // SAFETY: `p` is word-aligned (both ends are: link.x aligns the stack, and
        // the Arm ABI keeps sp 8-aligned at calls) and in [bottom, sp), the unused
        // part of the stack region that link.x reserves for this program alone.
        unsafe { write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
    core::hint::black_box(&mut *f)();
    let mut p = bottom;
    while p < sp {
        // SAFETY: `p` is word-aligned, in [bottom, sp), inside the stack region
        // reserved by link.x, and readable.
        if unsafe { read_volatile(p as *const u32) } != PAINT {
            break;
        }
        p += 4;
    }
    assert!(p > bottom, "the stack overflowed its region");
    sp - p
}

// --- instruction counting ---------------------------------------------------------------
//
// QEMU's `-icount shift=0` runs the guest clock at one nanosecond per guest
// instruction, and SysTick counts that clock (at the board's 25 MHz: one tick
// per 40 instructions). So SysTick ticks count instructions. The ratio is not
// assumed: `instructions` calibrates it against a loop of a known number of
// instructions.

/// SysTick control and status.
const SYST_CSR: *mut u32 = 0xE000_E010 as *mut u32;
/// SysTick reload value.
const SYST_RVR: *mut u32 = 0xE000_E014 as *mut u32;
/// SysTick current value.
const SYST_CVR: *mut u32 = 0xE000_E018 as *mut u32;
/// CSR: enable, clock source = the processor clock; COUNTFLAG.
const CSR_ENABLE_PROCESSOR_CLOCK: u32 = 0b101;
const CSR_COUNTFLAG: u32 = 1 << 16;
/// SysTick's counter is 24 bits.
const SYST_MAX: u32 = 0x00FF_FFFF;

/// The SysTick ticks `f` takes, or `None` if the 24-bit counter wrapped.
fn ticks(f: &mut dyn FnMut()) -> Option<u32> {
    // SAFETY: the SysTick registers exist on every Cortex-M at these addresses;
    // these are volatile word accesses, and nothing else uses SysTick (its
    // interrupt stays disabled).
    let start = unsafe {
        write_volatile(SYST_CSR, 0);
        write_volatile(SYST_RVR, SYST_MAX);
        write_volatile(SYST_CVR, 0);
        write_volatile(SYST_CSR, CSR_ENABLE_PROCESSOR_CLOCK);
        // Wait for the first reload, then clear COUNTFLAG by reading CSR.
        let mut spins = 0u32;
        while read_volatile(SYST_CVR) == 0 {
            spins += 1;
            if spins == 1_000_000 {
                return None;
            }
        }
        read_volatile(SYST_CSR);
        read_volatile(SYST_CVR)
    };
    core::hint::black_box(&mut *f)();
    // SAFETY: as above.
    let (end, csr) = unsafe { (read_volatile(SYST_CVR), read_volatile(SYST_CSR)) };
    // SAFETY: as above: stop the counter.
    unsafe { write_volatile(SYST_CSR, 0) };
    (csr & CSR_COUNTFLAG == 0).then(|| start - end)
}

/// Iterations of the calibration loop (two instructions each).
const CALIBRATION_LOOPS: u32 = 2_000_000;

/// A loop of exactly `2 * n` instructions (`subs` + `bne`).
#[inline(never)]
fn known_loop(n: u32) {
    // SAFETY: register arithmetic and a local branch only.
    unsafe {
        core::arch::asm!(
            "1:",
            "subs {n}, #1",
            "bne 1b",
            n = inout(reg) n => _,
            options(nomem, nostack),
        );
    }
}

/// Guest instructions `f` executes, measured with SysTick under
/// `qemu-system-arm -icount shift=0` (meaningless without `-icount`), or
/// `None` if SysTick does not count or wrapped. Includes the few instructions of
/// the call into `f` and of reading the counter.
pub fn instructions(f: &mut dyn FnMut()) -> Option<u64> {
    let calibration = ticks(&mut || known_loop(CALIBRATION_LOOPS))?;
    if calibration == 0 {
        return None;
    }
    let t = ticks(f)?;
    Some(u64::from(t) * 2 * u64::from(CALIBRATION_LOOPS) / u64::from(calibration))
}
