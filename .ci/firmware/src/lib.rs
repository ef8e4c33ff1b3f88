//! The run-time of the firmware programs: start-up, semihosting, and the
//! measuring tools (section sizes, stack painting, instruction counting).
//!
//! Written for QEMU's `mps2-an386` (Cortex-M4F, `src/cortex_m.rs`) and its
//! RISC-V `virt` machine (`src/riscv.rs`), with
//! `-semihosting-config enable=on,target=native`: output, the command line and
//! the exit code go through semihosting (`bkpt 0xAB` on Arm, an `ebreak`
//! sequence on RISC-V), which a board without a debugger attached would take as
//! a fault. No allocator, no `alloc`.
#![no_std]

use core::fmt;
use core::ptr::{addr_of, read_volatile, write_volatile};

// --- the processor ------------------------------------------------------------------
//
// Start-up, the semihosting trap, the stack pointer and the instruction counter
// differ per processor; everything else here is shared.

#[cfg(target_arch = "arm")]
mod cortex_m;
#[cfg(target_arch = "arm")]
use cortex_m as cpu;
#[cfg(target_arch = "riscv32")]
mod riscv;
#[cfg(target_arch = "riscv32")]
use riscv as cpu;

pub use cpu::CPU;
use cpu::{semihosting, ticks};

/// Any fault, trap or unexpected exception (the start-up points them all here):
/// report it and stop with a failure (not a hang until the CI timeout).
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

/// The command line QEMU passes, in `buf` (Arm: `<kernel file> <-append text>`;
/// RISC-V: the `arg=` values of `-semihosting-config`, space-separated); empty
/// if there is none or it does not fit.
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

/// This program's section sizes in bytes, as linked (`link.x`, `link-riscv.x`).
#[derive(Clone, Copy, Debug)]
pub struct Sections {
    /// `.text`: code (the Cortex-M vector table, 64 bytes, and the RISC-V
    /// start-up are not included).
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
    // SAFETY: copies the stack pointer into a register; no memory access.
    unsafe {
        core::arch::asm!(cpu::asm_text!(read_sp), out(reg) sp, options(nomem, nostack, preserves_flags));
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
    // Arm or RISC-V: neither ABI has a red zone, and interrupts are not enabled).
    let mut p = bottom;
    while p < sp {
        // SAFETY: `p` is word-aligned (both ends are: the linker script aligns
        // the stack, and the Arm and RISC-V ABIs keep sp 8- and 16-aligned) and in [bottom, sp), the unused
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

/// What `f` left on the free stack: paints the free stack below this frame as
/// [`stack_use`] does, runs `f`, then passes every word of the stack `f` used
/// (from the lowest word that no longer holds the pattern up to this frame's
/// stack pointer) to `visit`. Returns the bytes of stack `f` used.
#[inline(never)]
pub fn stack_residue(f: &mut dyn FnMut(), visit: &mut dyn FnMut(u32)) -> usize {
    let bottom = addr_of!(__stack_bottom) as usize;
    let sp = stack_pointer();
    let mut p = bottom;
    while p < sp {
        // SAFETY: as in `stack_use`: word-aligned, in [bottom, sp), the free
        // part of the stack region that link.x reserves for this program.
        unsafe { write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
    core::hint::black_box(&mut *f)();
    let mut low = bottom;
    while low < sp {
        // SAFETY: word-aligned, in [bottom, sp), readable.
        if unsafe { read_volatile(low as *const u32) } != PAINT {
            break;
        }
        low += 4;
    }
    assert!(low > bottom, "the stack overflowed its region");
    let mut p = low;
    while p < sp {
        // SAFETY: word-aligned, in [low, sp): stack below this frame that `f`
        // used and left, readable, not live.
        visit(unsafe { read_volatile(p as *const u32) });
        p += 4;
    }
    sp - low
}

// --- instruction counting ---------------------------------------------------------------
//
// Under QEMU's `-icount shift=0` every guest instruction advances the guest clock
// by one nanosecond, and each processor module reads a counter of that clock
// (`ticks`). The ratio of ticks to instructions is not assumed: `instructions`
// calibrates it against `known_loop`, a loop of a known number of instructions.

/// A loop of exactly `2 * n` instructions (`n` >= 1): a decrement and a
/// conditional branch each iteration (`cpu::asm_text!(count_down)`).
#[inline(never)]
fn known_loop(n: u32) {
    // SAFETY: register arithmetic and a local branch only.
    unsafe {
        core::arch::asm!(
            "1:",
            cpu::asm_text!(count_down),
            n = inout(reg) n => _,
            options(nomem, nostack),
        );
    }
}

/// Iterations of the calibration loop (two instructions each).
const CALIBRATION_LOOPS: u32 = 2_000_000;

/// Guest instructions `f` executes, measured under QEMU's `-icount shift=0`
/// (meaningless without `-icount`) with SysTick (Arm) or `minstret` (RISC-V), or
/// `None` if the counter does not count or wrapped. Includes the few instructions of
/// the call into `f` and of reading the counter.
pub fn instructions(f: &mut dyn FnMut()) -> Option<u64> {
    let calibration = ticks(&mut || known_loop(CALIBRATION_LOOPS))?;
    if calibration == 0 {
        return None;
    }
    let t = ticks(f)?;
    Some(u64::from(t) * 2 * u64::from(CALIBRATION_LOOPS) / u64::from(calibration))
}
