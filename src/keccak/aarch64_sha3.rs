//! Keccak-p\[1600\] with the ARMv8.2 SHA3 extension, one lane per register,
//! the rounds in assembly.
//!
//! A single sponge is one long dependency chain, so the kernel is built for
//! latency: each of the 25 lanes lives in lane 0 of its own vector register,
//! which makes pi a renaming of registers and leaves no shuffles. The SHA3
//! instructions were designed for exactly this:
//!
//! - theta's column parity is two `EOR3` per column, `D[x] = C[x-1] ^ rot(C[x+1],
//!   1)` is one `RAX1`;
//! - theta's XOR of `D` and rho's rotation are one `XAR` per lane (a plain
//!   `EOR` for lane (0, 0), which rho does not rotate);
//! - chi, `a ^ (!b & c)`, is one `BCAX` per lane.
//!
//! That is 66 vector operations per round, with iota's `EOR`. (Packing two
//! lanes per register does not pay: `XAR` takes one rotation count for both
//! halves, and pi would then need shuffles.)
//!
//! Those 66 operations are fast only where the core issues them on every
//! vector pipe, as Apple's do; Arm's own cores (Neoverse V1, V2, N2, V3, ...)
//! issue them on one, where the portable kernel is about twice as fast. So the
//! sponge generators take this kernel only on the cores of
//! `hazmat::keccak_for_aarch64_core`'s table that get it (issue 48); it stays
//! a tested backend wherever the CPU has the extension.
//!
//! # Why assembly
//!
//! The 25 lanes, theta's 5 parities and its 5 `D` words are 35 values, three
//! more than the 32 vector registers. Compiled from intrinsics (this kernel
//! until issue 48), the rounds stored lanes to the stack and loaded them back
//! in every round, moved registers, and loaded each lane with its own
//! instruction; the executed trace of one 12-round permutation was 1091
//! instructions against 967 for the `keccak` crate's own SHA3 code, and it
//! modelled slower than that peer on every core with the extension (see
//! below). Here the rounds are one `asm!` loop with the registers allocated by
//! hand (`round!`), with no spill and no move: lane `(x, y)` is in `v(x +
//! 5y)` at the start and the end of every round, and theta, rho and pi place
//! their values so that chi can write every lane back in place.
//!
//! The round constant is loaded with a scalar `LDR` (post-indexed), not a
//! broadcast: on LLVM's Apple M1 model the broadcast `LD1R` takes a vector
//! pipe, the bottleneck there. The round count is public, so a loop branch
//! over the rounds is no secret-dependent branch; every load and store is at
//! an address that depends only on the state's, the output's and the round
//! constants' addresses.
//!
//! Modelled by llvm-mca-19 (not measured; `scripts/aarch64-models.py`, cycles
//! per byte on Neoverse V1 / V2 / N2 / Apple M1, then instructions per
//! call):
//!
//! | call | before | after | `keccak` 0.2's SHA3 code |
//! |---|---|---|---|
//! | 12 rounds | 5.752 / 5.774 / 5.788 / 2.368, 1091 | 5.663 / 5.663 / 5.663 / 2.082, 872 | 5.707 / 5.707 / 5.707 / 2.148, 967 |
//! | 24 rounds | 11.517 / 11.546 / 11.547 / 4.479, 2030 | 11.310 / 11.310 / 11.310 / 4.113, 1700 | 11.355 / 11.355 / 11.355 / 4.208, 1879 |
//!
//! Part of the gain on the 12-round call is outside this file: the dispatch
//! (`keccak::permute`) had the portable kernel inlined, and with it that
//! kernel's frame, 12 stores and loads of callee-saved registers in front of
//! every call of this one; it now calls the portable kernel out of line.
//!
//! The whole ratchet period (8 blocks written, 9 permutations) is one `asm!`
//! block too, with the state in registers throughout: it is read from and
//! written back to memory once per period, and never stored anywhere else.

use core::arch::asm;

use super::soft::ROUND_CONSTANTS;
use super::{
    BLOCKS_PER_PERIOD, FULL_ROUNDS, LANES, RATCHET_PERIOD_BYTES, RATCHET_ZERO_BYTES, RATE_BYTES,
};

// The assembly below is written for this state, rate, period and ratchet.
const _: () = assert!(LANES == 25 && RATE_BYTES == 17 * 8);
const _: () = assert!(BLOCKS_PER_PERIOD == 8 && RATCHET_PERIOD_BYTES == 8 * RATE_BYTES);
const _: () = assert!(RATCHET_ZERO_BYTES == 4 * 8);

/// `asm!` with every vector register, `v0`–`v31`, declared clobbered (the
/// state, theta's words and the scratch fill all 32; the compiler saves the
/// callee-saved `d8`–`d15` around the block) and no use of the stack.
macro_rules! asm_all_vectors {
    ($($body:tt)*) => {
        asm!(
            $($body)*
            out("v0") _, out("v1") _, out("v2") _, out("v3") _,
            out("v4") _, out("v5") _, out("v6") _, out("v7") _,
            out("v8") _, out("v9") _, out("v10") _, out("v11") _,
            out("v12") _, out("v13") _, out("v14") _, out("v15") _,
            out("v16") _, out("v17") _, out("v18") _, out("v19") _,
            out("v20") _, out("v21") _, out("v22") _, out("v23") _,
            out("v24") _, out("v25") _, out("v26") _, out("v27") _,
            out("v28") _, out("v29") _, out("v30") _, out("v31") _,
            options(nostack),
        )
    };
}

/// The assembly of one round, `iota ∘ chi ∘ pi ∘ rho ∘ theta`, on the state
/// with lane `(x, y)` in the low 64 bits of `v(x + 5y)`, in and out.
/// `v25`–`v31` are scratch; `{rc}` points at the round constant and is
/// advanced past it. (The high 64 bits of every register are ignored.)
///
/// Registers: theta's parity `C[x]` is built in `v(25 + x)`; each `D[x]` is
/// written over a parity once that parity's two uses are done, `D[0]` to
/// `D[4]` in `v27`, `v30`, `v29`, `v31` and `v26`. theta's XOR of `D[x]`, rho
/// and pi then move lane `(x, y)` to `(y, 2x + 3y)`, into a register that
/// holds nothing still needed (a lane already read, a `D` word used for the
/// last time) and that chi does not write before it reads the lane: a lane
/// of row `y` goes to a register of a later row or to `v25`–`v31`. So chi
/// writes each lane `(x, y)` straight into `v(x + 5y)`, and the round ends
/// as it began, with no move.
///
/// The instructions are in an order found by list scheduling for a core
/// with three vector pipes and 2-cycle latencies (Apple's, as LLVM models
/// them; the order matters little to the real cores' out-of-order windows),
/// which keeps every register's reads before its next write. Comments name
/// lanes `(x, y)`.
///
/// `XAR` rotates right, so rho's rotation left by `r` is `#(64 - r) % 64`.
/// `BCAX d, n, m, a` is `n ^ (m & !a)`: chi's `b[x] ^ (!b[x + 1] & b[x + 2])`
/// takes `n = b[x]`, `m = b[x + 2]`, `a = b[x + 1]`.
macro_rules! round {
    () => {
        concat!(
            "eor3 v29.16b, v4.16b, v9.16b, v14.16b\n", // C[4] = (4, 0) ^ (4, 1) ^ (4, 2)
            "eor3 v26.16b, v1.16b, v6.16b, v11.16b\n", // C[1] = (1, 0) ^ (1, 1) ^ (1, 2)
            "eor3 v27.16b, v2.16b, v7.16b, v12.16b\n", // C[2] = (2, 0) ^ (2, 1) ^ (2, 2)
            "eor3 v28.16b, v3.16b, v8.16b, v13.16b\n", // C[3] = (3, 0) ^ (3, 1) ^ (3, 2)
            "eor3 v26.16b, v26.16b, v16.16b, v21.16b\n", // C[1] ^= (1, 3) ^ (1, 4)
            "eor3 v27.16b, v27.16b, v17.16b, v22.16b\n", // C[2] ^= (2, 3) ^ (2, 4)
            "eor3 v28.16b, v28.16b, v18.16b, v23.16b\n", // C[3] ^= (3, 3) ^ (3, 4)
            "eor3 v29.16b, v29.16b, v19.16b, v24.16b\n", // C[4] ^= (4, 3) ^ (4, 4)
            "rax1 v31.2d, v27.2d, v29.2d\n",           // D[3] = C[2] ^ rot(C[4], 1)
            "xar v23.2d, v23.2d, v31.2d, #8\n",        // (3, 4) to (4, 3), rotated left by 56
            "eor3 v25.16b, v0.16b, v5.16b, v10.16b\n", // C[0] = (0, 0) ^ (0, 1) ^ (0, 2)
            "eor3 v25.16b, v25.16b, v15.16b, v20.16b\n", // C[0] ^= (0, 3) ^ (0, 4)
            "rax1 v30.2d, v25.2d, v27.2d\n",           // D[1] = C[0] ^ rot(C[2], 1)
            "rax1 v27.2d, v29.2d, v26.2d\n",           // D[0] = C[4] ^ rot(C[1], 1)
            "rax1 v29.2d, v26.2d, v28.2d\n",           // D[2] = C[1] ^ rot(C[3], 1)
            "xar v6.2d, v6.2d, v30.2d, #20\n",         // (1, 1) to (1, 0), rotated left by 44
            "xar v16.2d, v16.2d, v30.2d, #19\n",       // (1, 3) to (3, 1), rotated left by 45
            "rax1 v26.2d, v28.2d, v25.2d\n",           // D[4] = C[3] ^ rot(C[0], 1)
            "xar v20.2d, v20.2d, v27.2d, #46\n",       // (0, 4) to (4, 2), rotated left by 18
            "xar v10.2d, v10.2d, v27.2d, #61\n",       // (0, 2) to (2, 1), rotated left by 3
            "xar v22.2d, v22.2d, v29.2d, #3\n",        // (2, 4) to (4, 1), rotated left by 61
            "xar v25.2d, v2.2d, v29.2d, #2\n",         // (2, 0) to (0, 4), rotated left by 62
            "xar v28.2d, v8.2d, v31.2d, #9\n",         // (3, 1) to (1, 4), rotated left by 55
            "xar v8.2d, v12.2d, v29.2d, #21\n",        // (2, 2) to (2, 0), rotated left by 43
            "xar v19.2d, v19.2d, v26.2d, #56\n",       // (4, 3) to (3, 2), rotated left by 8
            "xar v12.2d, v9.2d, v26.2d, #44\n",        // (4, 1) to (1, 1), rotated left by 20
            "xar v9.2d, v18.2d, v31.2d, #43\n",        // (3, 3) to (3, 0), rotated left by 21
            "xar v18.2d, v7.2d, v29.2d, #58\n",        // (2, 1) to (1, 2), rotated left by 6
            "xar v7.2d, v24.2d, v26.2d, #50\n",        // (4, 4) to (4, 0), rotated left by 14
            "xar v29.2d, v17.2d, v29.2d, #49\n",       // (2, 3) to (3, 3), rotated left by 15
            "xar v17.2d, v1.2d, v30.2d, #63\n",        // (1, 0) to (0, 2), rotated left by 1
            "xar v24.2d, v5.2d, v27.2d, #28\n",        // (0, 1) to (1, 3), rotated left by 36
            "eor v5.16b, v0.16b, v27.16b\n",           // (0, 0) stays, not rotated
            "bcax v1.16b, v6.16b, v9.16b, v8.16b\n",   // chi: (1, 0)
            "bcax v2.16b, v8.16b, v7.16b, v9.16b\n",   // chi: (2, 0)
            "xar v27.2d, v15.2d, v27.2d, #23\n",       // (0, 3) to (3, 4), rotated left by 41
            "xar v15.2d, v13.2d, v31.2d, #39\n",       // (3, 2) to (2, 2), rotated left by 25
            "bcax v0.16b, v5.16b, v8.16b, v6.16b\n",   // chi: (0, 0)
            "xar v13.2d, v3.2d, v31.2d, #36\n",        // (3, 0) to (0, 1), rotated left by 28
            "xar v31.2d, v21.2d, v30.2d, #62\n",       // (1, 4) to (4, 4), rotated left by 2
            "bcax v3.16b, v9.16b, v5.16b, v7.16b\n",   // chi: (3, 0)
            "xar v21.2d, v11.2d, v30.2d, #54\n",       // (1, 2) to (2, 3), rotated left by 10
            "bcax v8.16b, v16.16b, v13.16b, v22.16b\n", // chi: (3, 1)
            "bcax v9.16b, v22.16b, v12.16b, v13.16b\n", // chi: (4, 1)
            "xar v30.2d, v14.2d, v26.2d, #25\n",       // (4, 2) to (2, 4), rotated left by 39
            "bcax v11.16b, v18.16b, v19.16b, v15.16b\n", // chi: (1, 2)
            "xar v26.2d, v4.2d, v26.2d, #37\n",        // (4, 0) to (0, 3), rotated left by 27
            "bcax v14.16b, v20.16b, v18.16b, v17.16b\n", // chi: (4, 2)
            "bcax v4.16b, v7.16b, v6.16b, v5.16b\n",   // chi: (4, 0)
            "bcax v5.16b, v13.16b, v10.16b, v12.16b\n", // chi: (0, 1)
            "bcax v6.16b, v12.16b, v16.16b, v10.16b\n", // chi: (1, 1)
            "bcax v7.16b, v10.16b, v22.16b, v16.16b\n", // chi: (2, 1)
            "bcax v10.16b, v17.16b, v15.16b, v18.16b\n", // chi: (0, 2)
            "bcax v12.16b, v15.16b, v20.16b, v19.16b\n", // chi: (2, 2)
            "bcax v13.16b, v19.16b, v17.16b, v20.16b\n", // chi: (3, 2)
            "bcax v15.16b, v26.16b, v21.16b, v24.16b\n", // chi: (0, 3)
            "bcax v16.16b, v24.16b, v29.16b, v21.16b\n", // chi: (1, 3)
            "bcax v17.16b, v21.16b, v23.16b, v29.16b\n", // chi: (2, 3)
            "bcax v18.16b, v29.16b, v26.16b, v23.16b\n", // chi: (3, 3)
            "bcax v19.16b, v23.16b, v24.16b, v26.16b\n", // chi: (4, 3)
            "bcax v20.16b, v25.16b, v30.16b, v28.16b\n", // chi: (0, 4)
            "bcax v21.16b, v28.16b, v27.16b, v30.16b\n", // chi: (1, 4)
            "bcax v22.16b, v30.16b, v31.16b, v27.16b\n", // chi: (2, 4)
            "bcax v23.16b, v27.16b, v25.16b, v31.16b\n", // chi: (3, 4)
            "bcax v24.16b, v31.16b, v28.16b, v25.16b\n", // chi: (4, 4)
            "ldr d25, [{rc}], #8\n",                   // iota: the round constant
            "eor v0.16b, v0.16b, v25.16b\n",           // iota
        )
    };
}

/// Loads the state from `{state}`: lane `i` to the low 64 bits of `v(i)`.
/// (Paired loads: four-register `LD1`s of `.1d` lanes are fewer instructions
/// but modelled slower on LLVM's Apple M1 model, 2.324 against 2.199 cycles
/// per byte for 12 rounds when this was tried.)
macro_rules! load_state {
    () => {
        concat!(
            "ldp d0, d1, [{state}]\n",
            "ldp d2, d3, [{state}, #16]\n",
            "ldp d4, d5, [{state}, #32]\n",
            "ldp d6, d7, [{state}, #48]\n",
            "ldp d8, d9, [{state}, #64]\n",
            "ldp d10, d11, [{state}, #80]\n",
            "ldp d12, d13, [{state}, #96]\n",
            "ldp d14, d15, [{state}, #112]\n",
            "ldp d16, d17, [{state}, #128]\n",
            "ldp d18, d19, [{state}, #144]\n",
            "ldp d20, d21, [{state}, #160]\n",
            "ldp d22, d23, [{state}, #176]\n",
            "ldr d24, [{state}, #192]\n",
        )
    };
}

/// Stores the state to `{state}`: the low 64 bits of `v(i)` to lane `i`.
/// (Paired stores: on LLVM's Neoverse models a multi-register `ST1` takes the
/// pipe the SHA3 instructions need.)
macro_rules! store_state {
    () => {
        concat!(
            "stp d0, d1, [{state}]\n",
            "stp d2, d3, [{state}, #16]\n",
            "stp d4, d5, [{state}, #32]\n",
            "stp d6, d7, [{state}, #48]\n",
            "stp d8, d9, [{state}, #64]\n",
            "stp d10, d11, [{state}, #80]\n",
            "stp d12, d13, [{state}, #96]\n",
            "stp d14, d15, [{state}, #112]\n",
            "stp d16, d17, [{state}, #128]\n",
            "stp d18, d19, [{state}, #144]\n",
            "stp d20, d21, [{state}, #160]\n",
            "stp d22, d23, [{state}, #176]\n",
            "str d24, [{state}, #192]\n",
        )
    };
}

/// `ROUNDS` rounds: `{rc}` points at the first round constant, `{rounds}`
/// holds `ROUNDS` (at least 1) and ends at 0. Local label 2.
macro_rules! rounds {
    () => {
        concat!(
            "2:\n",
            round!(),
            "subs {rounds}, {rounds}, #1\n",
            "b.ne 2b\n",
        )
    };
}

/// The round constants of Keccak-p\[1600, `ROUNDS`\]: the last `ROUNDS` of
/// Keccak-f\[1600\]'s.
const fn round_constants<const ROUNDS: usize>() -> &'static [u64] {
    const { assert!(ROUNDS >= 1 && ROUNDS <= FULL_ROUNDS) };
    ROUND_CONSTANTS.split_at(FULL_ROUNDS - ROUNDS).1
}

/// Keccak-p\[1600, `ROUNDS`\] of `state`.
#[target_feature(enable = "sha3")]
pub(crate) fn permute<const ROUNDS: usize>(state: &mut [u64; LANES]) {
    let round_constants = round_constants::<ROUNDS>();
    // SAFETY:
    // - the assembly reads and writes only the registers it names as operands
    //   (`v0`–`v31` clobbered, the general-purpose operands) and the flags
    //   (`subs`); the compiler saves and restores the callee-saved `d8`–`d15`
    //   around it, as for any clobber;
    // - its memory accesses are the 25 lanes at `state` (a valid, exclusively
    //   borrowed `[u64; 25]`, 8-byte aligned as `ldp`/`stp` of `d` registers
    //   need at most) and `ROUNDS` round constants from `round_constants`,
    //   which holds exactly `ROUNDS` `u64`s; it keeps no pointer after it
    //   returns;
    // - it does not touch the stack (`nostack`);
    // - its only branch is the round loop's, back to the local label 2 inside
    //   the block; `ROUNDS` is at least 1 (`round_constants`' assertion), so
    //   the loop runs `ROUNDS` times and ends;
    // - it uses only base, NEON and SHA3 instructions, and SHA3 is enabled
    //   (this function's target feature, which the caller guarantees).
    unsafe {
        asm_all_vectors!(
            load_state!(),
            rounds!(),
            store_state!(),
            state = in(reg) state.as_mut_ptr(),
            rc = inout(reg) round_constants.as_ptr() => _,
            rounds = inout(reg) ROUNDS => _,
        );
    }
}

/// One ratchet period (see [`super::squeeze_period`]): 8 rate blocks, each
/// followed by a permutation, then the ratchet's zeroing and one more.
///
/// # Security
/// The state is read once, kept in vector registers through the 9
/// permutations, and written back once: no copy of it goes to the stack. The
/// registers keep the last state when the function returns, as any
/// compiled code leaves its registers (the frame of the compiled kernels did
/// the same).
#[target_feature(enable = "sha3")]
pub(crate) fn squeeze_period<const ROUNDS: usize>(
    state: &mut [u64; LANES],
    out: &mut [u8; RATCHET_PERIOD_BYTES],
) {
    let round_constants = round_constants::<ROUNDS>();
    // SAFETY:
    // - the assembly reads and writes only the registers it names as operands
    //   (`v0`–`v31` clobbered, the general-purpose operands) and the flags
    //   (`subs`); the compiler saves and restores the callee-saved `d8`–`d15`
    //   around it, as for any clobber;
    // - its memory accesses are the 25 lanes at `state` (a valid, exclusively
    //   borrowed `[u64; 25]`), `ROUNDS` round constants from
    //   `round_constants` per permutation (it holds exactly `ROUNDS` `u64`s,
    //   and `{rc}` restarts at its first for each), and 8 blocks of 17 lanes
    //   stored one after the other from `out`, 8 × 136 = 1088 bytes, exactly
    //   `out` (a valid, exclusively borrowed `[u8; 1088]`; `str`/`stp` of `d`
    //   registers need no alignment on aarch64 Linux, macOS and Windows,
    //   whose normal memory allows unaligned access); it keeps no pointer
    //   after it returns;
    // - it does not touch the stack (`nostack`);
    // - its branches go to local labels inside the block and depend only on
    //   the counters: `{blocks}` counts 8 blocks down, and after the
    //   permutation of the eighth reaches 0 (the ratchet), then -1 (the end);
    //   `ROUNDS` is at least 1, so each round loop ends;
    // - it uses only base, NEON and SHA3 instructions, and SHA3 is enabled
    //   (this function's target feature, which the caller guarantees);
    // - the rate is stored as lanes: little-endian bytes, as the sponge's
    //   output is, because this backend is compiled for little-endian
    //   targets only (build.rs).
    unsafe {
        asm_all_vectors!(
            load_state!(),
            // A block: the rate (lanes 0 to 16), then a permutation.
            "3:",
            "stp d0, d1, [{out}], #16",
            "stp d2, d3, [{out}], #16",
            "stp d4, d5, [{out}], #16",
            "stp d6, d7, [{out}], #16",
            "stp d8, d9, [{out}], #16",
            "stp d10, d11, [{out}], #16",
            "stp d12, d13, [{out}], #16",
            "stp d14, d15, [{out}], #16",
            "str d16, [{out}], #8",
            "4:",
            "mov {rc}, {round_constants}",
            "mov {rounds}, {rounds_per_permutation}",
            rounds!(),
            "subs {blocks}, {blocks}, #1",
            "b.gt 3b",
            "b.lt 5f",
            // After the eighth block: the ratchet zeroes the first 4 lanes
            // and permutes once more.
            "movi v0.2d, #0",
            "movi v1.2d, #0",
            "movi v2.2d, #0",
            "movi v3.2d, #0",
            "b 4b",
            "5:",
            store_state!(),
            state = in(reg) state.as_mut_ptr(),
            out = inout(reg) out.as_mut_ptr() => _,
            blocks = inout(reg) BLOCKS_PER_PERIOD => _,
            round_constants = in(reg) round_constants.as_ptr(),
            rounds_per_permutation = in(reg) ROUNDS,
            rc = out(reg) _,
            rounds = out(reg) _,
        );
    }
}
