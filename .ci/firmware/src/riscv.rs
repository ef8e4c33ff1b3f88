//! RISC-V (`riscv32imac-unknown-none-elf`, an ESP32-C3 class core) under
//! `qemu-system-riscv32 -M virt -bios none`, in machine mode: the start-up and
//! the trap vector, the semihosting trap, the stack pointer, and `minstret` as
//! the instruction counter.

/// What the programs print as the processor they run on.
pub const CPU: &str = "RISC-V rv32imac";

// --- start-up -------------------------------------------------------------------------
//
// QEMU's `virt` machine with `-bios none` starts the hart in machine mode and
// jumps to the start of RAM, where `link-riscv.x` puts `.text.start` first. The
// start-up sets the stack pointer and the trap vector, copies .data and zeroes
// .bss before the first Rust instruction, then calls `firmware_main`. Every trap
// (there are no interrupts: none is enabled) goes to `fault_handler`.
core::arch::global_asm!(
    r#"
    .section .text.start, "ax"
    .global _start
    .type _start, @function
_start:
    la sp, __stack_top
    la t0, trap_entry
    csrw mtvec, t0
    # Copy .data from its load address to RAM.
    la t0, __sdata
    la t1, __edata
    la t2, __sidata
1:  bgeu t0, t1, 2f
    lw t3, 0(t2)
    sw t3, 0(t0)
    addi t0, t0, 4
    addi t2, t2, 4
    j 1b
    # Zero .bss.
2:  la t0, __sbss
    la t1, __ebss
3:  bgeu t0, t1, 4f
    sw zero, 0(t0)
    addi t0, t0, 4
    j 3b
4:  call firmware_main
5:  j 5b
    .size _start, . - _start

    # mtvec in direct mode needs a 4-byte aligned handler.
    .p2align 2
trap_entry:
    j fault_handler
"#
);

// --- semihosting ----------------------------------------------------------------------

/// One semihosting call: operation `op` in `a0`, argument `arg` in `a1`,
/// returning `a0`.
pub(crate) fn semihosting(op: usize, arg: usize) -> usize {
    let ret;
    // SAFETY: the three-instruction sequence (`slli zero, zero, 0x1f`, `ebreak`,
    // `srai zero, zero, 7`, uncompressed, in one page) is the RISC-V semihosting
    // trap, serviced by QEMU (`-semihosting-config enable=on`); the two shifts
    // write `zero`, so they do nothing. It reads and writes only the memory that
    // `arg` points to, which every caller owns for the call (the asm is not
    // `nomem`, so the compiler keeps those writes and reads in order); it
    // changes no register but a0 and uses no stack. The alignment padding is
    // executed as `nop`s.
    unsafe {
        core::arch::asm!(
            ".option push",
            ".option norvc",
            ".balign 16",
            "slli zero, zero, 0x1f",
            "ebreak",
            "srai zero, zero, 7",
            ".option pop",
            inout("a0") op => ret,
            in("a1") arg,
            options(nostack, preserves_flags),
        );
    }
    ret
}

// --- the instructions of `stack_pointer` and `known_loop` (lib.rs) -----------------------

/// `read_sp`: copies the stack pointer into operand `{}`. `count_down`: one
/// iteration of `known_loop`, two instructions (`addi` + `bnez`), decrementing
/// operand `{n}` and branching back to label `1:` while it is not zero.
macro_rules! asm_text {
    (read_sp) => {
        "mv {}, sp"
    };
    (count_down) => {
        "addi {n}, {n}, -1\nbnez {n}, 1b"
    };
}
pub(crate) use asm_text;

// --- instruction counting ---------------------------------------------------------------
//
// `minstret` counts retired instructions; QEMU derives it from the `-icount`
// clock, so under `-icount shift=0` it advances by one per guest instruction. The
// crate's `instructions` still calibrates it against `known_loop`.

/// The low 32 bits of `minstret`.
#[inline(always)]
fn minstret() -> u32 {
    let n: u32;
    // SAFETY: reads a machine-mode counter CSR (the program runs in machine
    // mode); no memory access.
    unsafe {
        core::arch::asm!("csrr {}, minstret", out(reg) n, options(nomem, nostack, preserves_flags));
    }
    n
}

/// The `minstret` ticks `f` takes (modulo 2^32: every measured run is far
/// shorter than 2^32 instructions).
pub(crate) fn ticks(f: &mut dyn FnMut()) -> Option<u32> {
    let start = minstret();
    core::hint::black_box(&mut *f)();
    Some(minstret().wrapping_sub(start))
}
