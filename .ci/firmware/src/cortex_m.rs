//! Cortex-M4F (`thumbv7em-none-eabihf`) under QEMU's `mps2-an386`: the vector
//! table and start-up, the semihosting trap (`bkpt 0xAB`), the stack pointer,
//! and SysTick as the instruction counter.

use core::ptr::{read_volatile, write_volatile};

/// What the programs print as the processor they run on.
pub const CPU: &str = "Cortex-M4F";

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

// --- semihosting ----------------------------------------------------------------------

/// One semihosting call: operation `op` with argument `arg`, returning `r0`.
pub(crate) fn semihosting(op: usize, arg: usize) -> usize {
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

// --- the instructions of `stack_pointer` and `known_loop` (lib.rs) -----------------------

/// `read_sp`: copies the stack pointer into operand `{}`. `count_down`: one
/// iteration of `known_loop`, two instructions (`subs` + `bne`), decrementing
/// operand `{n}` and branching back to label `1:` while it is not zero.
macro_rules! asm_text {
    (read_sp) => {
        "mov {}, sp"
    };
    (count_down) => {
        "subs {n}, #1\nbne 1b"
    };
}
pub(crate) use asm_text;

// --- instruction counting ---------------------------------------------------------------
//
// QEMU's `-icount shift=0` runs the guest clock at one nanosecond per guest
// instruction, and SysTick counts that clock (at the board's 25 MHz: one tick
// per 40 instructions). So SysTick ticks count instructions. The ratio is not
// assumed: the crate's `instructions` calibrates it against `known_loop`.

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
pub(crate) fn ticks(f: &mut dyn FnMut()) -> Option<u32> {
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
