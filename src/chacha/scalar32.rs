//! ChaCha for 32-bit scalar cores (Cortex-M, RISC-V rv32, wasm32 without
//! `simd128`): one block at a time, its 16 state words in registers, each
//! word stored straight to its place in the chacha8rand interleaved layout.
//!
//! [`soft`](super::soft) computes the four blocks of a group side by side
//! (`[[u32; 4]; 16]`), the shape a 128-bit vector unit wants; on a core with
//! 13 to 31 general registers and no vectors, that group state lives in memory
//! and is gathered and scattered every round. Here each block is an ordinary
//! ChaCha block on sixteen scalars (the compiler keeps them in registers,
//! spilling the few that do not fit), and only its 16 output words touch
//! memory: word `w` of block `counter` goes to byte
//! `256 * (counter / 4) + 16 * w + 4 * (counter % 4)` of the key period, which
//! is the interleaving of [C2SP chacha8rand], so the bytes are those of `soft`
//! (the tests in `chacha.rs` compare them for 8, 12 and 20 rounds).
//!
//! Portable safe code: it compiles for every target, so x86_64 tests, Miri and
//! `tests/ct_valgrind.rs` run it too; `chacha.rs` makes it the portable kernel
//! only where it is the faster one (32-bit targets).
//!
//! On 32-bit Arm the double-round loop carries eight of the words with their
//! last rotation still to do ([`ROTATIONS_DEFERRED`]), which makes every
//! rotation an operand shift; elsewhere it is the plain loop of
//! [`inner_block`]. The tests run both forms on every target.
//!
//! Every operation is an add, xor or fixed rotation on 32-bit words; every
//! index and branch depends on the block counter and word number only, which
//! are public.
//!
//! [C2SP chacha8rand]: https://c2sp.org/chacha8rand

#![forbid(unsafe_code)]

use super::soft::{
    CONSTANTS, GROUP_BLOCKS, GROUP_BYTES, KEY_PERIOD_GROUPS, KEY_PERIOD_OUTPUT_BYTES, KEY_WORDS,
    STATE_WORDS, double_rounds, inner_block, quarter_round,
};
use zeroize::Zeroize;

/// Blocks computed under one key (counters 0 to 15).
const KEY_PERIOD_BLOCKS: u32 = (KEY_PERIOD_GROUPS * GROUP_BLOCKS) as u32;

/// State words of the last group that are its output; words 14 and 15 of its
/// four blocks are the next key instead.
const LAST_GROUP_OUTPUT_WORDS: usize = STATE_WORDS - KEY_WORDS / GROUP_BLOCKS;

/// Bytes of stack [`scrub_stack`] zeroes below its caller's frame: more than
/// the frame of [`blocks`] (saved registers, spilled state and key words) on
/// the targets measured: 184 bytes on a Cortex-M4 at opt-levels "s" and 3.
const SCRUB_BYTES: usize = 256;

/// Bytes [`block`] stores from the first byte of its lane (`4 * lane` in a
/// group): words 0 to 13, `16 * 13 + 4`.
const LANE_SPAN: usize = 16 * (LAST_GROUP_OUTPUT_WORDS - 1) + 4;

/// Whether [`key_period`] runs the double rounds of a block in deferred form
/// ([`double_round_deferred`]): on 32-bit Arm, whose add and xor take a
/// rotated operand for free (`eor r0, r1, r2, ror #24`). There a word carried
/// from one double round to the next costs an instruction to rotate, 8 per
/// double round, which the deferred form saves: on a Cortex-M4
/// (`.ci/firmware/measure.sh`), ChaCha8 9.7 -> 9.1 instructions per byte at
/// opt-level 3 and 9.7 -> 9.5 at "s". Elsewhere a rotation is an instruction
/// at each use (three on rv32 without `Zbb`), and a deferred `d` word is
/// rotated at two uses instead of once: 6% more instructions on rv32imac.
/// (Thumb-1 cores, Cortex-M0, are `arm` too, without shifted operands; not
/// measured.)
pub(crate) const ROTATIONS_DEFERRED: bool = cfg!(target_arch = "arm");

/// The last rotation of a quarter round on its `b` word (RFC 8439 §2.1), and
/// on its `d` word: [`double_round_deferred`] leaves them to the next use.
const B_DEFERRED: u32 = 7;
const D_DEFERRED: u32 = 8;

/// [`quarter_round`] on `b` and `d` words in deferred form (each still to be
/// rotated left by [`B_DEFERRED`] and [`D_DEFERRED`]).
#[inline(always)]
fn quarter_round_from_deferred(x: &mut [u32; STATE_WORDS], a: usize, b: usize, c: usize, d: usize) {
    x[b] = x[b].rotate_left(B_DEFERRED);
    x[d] = x[d].rotate_left(D_DEFERRED);
    quarter_round(x, a, b, c, d);
}

/// [`quarter_round`] that leaves `b` and `d` in deferred form: without their
/// last rotation.
#[inline(always)]
fn quarter_round_deferring(x: &mut [u32; STATE_WORDS], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] ^= x[a];
    x[c] = x[c].wrapping_add(x[d].rotate_left(D_DEFERRED));
    x[b] ^= x[c];
}

/// [`inner_block`] (a column round and a diagonal round) on a state whose
/// words 4–7 (`b` of every quarter round) and 12–15 (`d`) are in deferred
/// form, rotated right by [`B_DEFERRED`] and [`D_DEFERRED`]; it leaves them
/// in that form. See [`ROTATIONS_DEFERRED`].
///
/// The four quarter rounds of a round touch disjoint words, so any order
/// gives the same state, but the compiler spills differently for each. The
/// order of the diagonal round is the best of all 24 on a Cortex-M4
/// (`.ci/firmware/measure.sh`, rustc 1.95), judged by the worst of ChaCha8
/// and ChaCha12 against the `chacha20` crate at opt-levels "s" and 3:
/// ChaCha12 12.24 -> 11.99 instructions per byte at 3 and 12.66 -> 12.26
/// at "s" against RFC 8439's order (the worst order: 13.08 at "s"). The
/// order of the column round changed nothing.
#[inline(always)]
fn double_round_deferred(x: &mut [u32; STATE_WORDS]) {
    quarter_round_from_deferred(x, 0, 4, 8, 12);
    quarter_round_from_deferred(x, 1, 5, 9, 13);
    quarter_round_from_deferred(x, 2, 6, 10, 14);
    quarter_round_from_deferred(x, 3, 7, 11, 15);
    quarter_round_deferring(x, 2, 7, 8, 13);
    quarter_round_deferring(x, 3, 4, 9, 14);
    quarter_round_deferring(x, 1, 6, 11, 12);
    quarter_round_deferring(x, 0, 5, 10, 15);
}

/// Computes the ChaCha block with `counter` (nonce zero) under `key` with
/// `ROUNDS` rounds, adds the key back into words 4–11 only (chacha8rand's
/// feed-forward), stores words 0 to 13 little-endian at bytes `16 * w` of
/// `lane`, and returns words 14 and 15: output, or in the last group of a key
/// period part of the next key, as the caller decides.
///
/// Written out word by word, with every index a constant, so that nothing of
/// the state needs an address: at opt-level "s" the compiler does not unroll
/// loops, and a loop over the state words would put them in memory.
///
/// The double rounds run in deferred form ([`double_round_deferred`]) if
/// `DEFERRED`, else as [`inner_block`]: the same block.
///
/// # Security
/// `lane` receives keystream; the returned words are keystream or key.
#[inline(always)]
fn block<const ROUNDS: usize, const DEFERRED: bool>(
    key: &[u32; KEY_WORDS],
    counter: u32,
    lane: &mut [u8; LANE_SPAN],
) -> [u32; 2] {
    let double_rounds = const { double_rounds::<ROUNDS>() };
    let [c0, c1, c2, c3] = CONSTANTS;
    // Indexed by constants only, so the array is sixteen scalars to the
    // compiler (scalar replacement): no memory, unless registers run out.
    let mut x = [
        c0, c1, c2, c3, key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7], counter, 0,
        0, 0,
    ];
    if DEFERRED {
        // In and out of deferred form; the key's rotations are the same for
        // every block of a period (the compiler computes them once).
        x[4] = x[4].rotate_right(B_DEFERRED);
        x[5] = x[5].rotate_right(B_DEFERRED);
        x[6] = x[6].rotate_right(B_DEFERRED);
        x[7] = x[7].rotate_right(B_DEFERRED);
        x[12] = x[12].rotate_right(D_DEFERRED);
        // Words 13–15 are zero, in either form.
        for _ in 0..double_rounds {
            double_round_deferred(&mut x);
        }
        x[4] = x[4].rotate_left(B_DEFERRED);
        x[5] = x[5].rotate_left(B_DEFERRED);
        x[6] = x[6].rotate_left(B_DEFERRED);
        x[7] = x[7].rotate_left(B_DEFERRED);
        x[12] = x[12].rotate_left(D_DEFERRED);
        x[13] = x[13].rotate_left(D_DEFERRED);
        x[14] = x[14].rotate_left(D_DEFERRED);
        x[15] = x[15].rotate_left(D_DEFERRED);
    } else {
        for _ in 0..double_rounds {
            inner_block(&mut x);
        }
    }
    /// Stores word `$w` (fed forward with `$add`) at byte `16 * $w`.
    macro_rules! store {
        ($w:literal) => {
            store!($w, 0)
        };
        ($w:literal, $add:expr) => {
            let word: u32 = x[$w].wrapping_add($add);
            lane[16 * $w..16 * $w + 4].copy_from_slice(&word.to_le_bytes());
        };
    }
    store!(0);
    store!(1);
    store!(2);
    store!(3);
    store!(4, key[0]);
    store!(5, key[1]);
    store!(6, key[2]);
    store!(7, key[3]);
    store!(8, key[4]);
    store!(9, key[5]);
    store!(10, key[6]);
    store!(11, key[7]);
    store!(12);
    store!(13);
    [x[14], x[15]]
}

/// The 16 blocks of one key period, written to `out` and (the last 32 bytes)
/// to `key`. Out of line, so that [`scrub_stack`] can wipe the stack it used.
#[inline(never)]
fn blocks<const ROUNDS: usize, const DEFERRED: bool>(
    key: &mut [u32; KEY_WORDS],
    out: &mut [u8; KEY_PERIOD_OUTPUT_BYTES],
) {
    // Words 14 and 15 of the last group's four blocks are the next key, in
    // interleaved order (14 of lanes 0–3, then 15 of lanes 0–3); the old key
    // is needed until the last block, so they wait in `next`.
    let mut next = [0u32; KEY_WORDS];
    // One loop over the 16 blocks, one copy of the block code (flash).
    for counter in 0..KEY_PERIOD_BLOCKS {
        let group = counter as usize / GROUP_BLOCKS;
        let lane = counter as usize % GROUP_BLOCKS;
        let at = GROUP_BYTES * group + 4 * lane;
        let lane_out = (&mut out[at..at + LANE_SPAN])
            .try_into()
            .expect("LANE_SPAN");
        let [w14, w15] = block::<ROUNDS, DEFERRED>(key, counter, lane_out);
        if group + 1 < KEY_PERIOD_GROUPS {
            out[at + 16 * 14..at + 16 * 14 + 4].copy_from_slice(&w14.to_le_bytes());
            out[at + 16 * 15..at + 16 * 15 + 4].copy_from_slice(&w15.to_le_bytes());
        } else {
            next[lane] = w14;
            next[GROUP_BLOCKS + lane] = w15;
        }
    }
    *key = next;
    next.zeroize();
}

/// Zeroes [`SCRUB_BYTES`] of stack: called right after [`blocks`] from the
/// same frame, its own frame lies where `blocks` spilled state words and saved
/// registers, and its volatile writes overwrite them. In `u64`s: one store
/// instruction (`strd`) per 8 bytes on 32-bit Arm.
#[inline(never)]
fn scrub_stack() {
    let mut scratch = [0u64; SCRUB_BYTES / 8];
    scratch.zeroize();
}

/// One chacha8rand key period (the same bytes as
/// [`soft::key_period`](super::soft::key_period)): 992 output bytes of `key`
/// to `out`, and `key` replaced by the next key.
///
/// # Security
/// `out` receives keystream. The old key is overwritten in place, the words of
/// the next key are wiped from their local copy, and the stack the block
/// loop used (spilled state words) is zeroed before returning.
#[inline]
pub(crate) fn key_period<const ROUNDS: usize>(
    key: &mut [u32; KEY_WORDS],
    out: &mut [u8; KEY_PERIOD_OUTPUT_BYTES],
) {
    key_period_with::<ROUNDS, ROTATIONS_DEFERRED>(key, out);
}

/// [`key_period`] with the double rounds in deferred form or not
/// ([`ROTATIONS_DEFERRED`]) whatever the target: the tests check both forms
/// against `soft` everywhere.
///
/// # Security
/// As [`key_period`].
#[inline]
pub(crate) fn key_period_with<const ROUNDS: usize, const DEFERRED: bool>(
    key: &mut [u32; KEY_WORDS],
    out: &mut [u8; KEY_PERIOD_OUTPUT_BYTES],
) {
    blocks::<ROUNDS, DEFERRED>(key, out);
    scrub_stack();
}
