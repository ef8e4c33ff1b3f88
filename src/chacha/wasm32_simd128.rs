//! ChaCha on WebAssembly `simd128`: a chacha8rand group is four blocks side by
//! side, one `v128` per state word (lane `i` is block `counter + i`), which is
//! already the interleaved output order, so each row is stored as it is.
//!
//! Compiled only when the whole build has `simd128` (`-C
//! target-feature=+simd128`): WebAssembly has no run-time feature probe, and a
//! module with SIMD instructions does not load on an engine without them, so
//! the choice is the builder's (`chacha.rs` selects this kernel then).
//!
//! Rotations by 16 and 8 bits are byte shuffles (`i8x16.shuffle`, one
//! instruction on the engines' x86 and Arm back ends); by 12 and 7, two shifts
//! and an or. Every operation is lane-wise on public indices: no branch or
//! address depends on the key or the output.
//!
//! The state is sixteen `v128` values indexed by constants only, so the
//! compiler keeps them in WebAssembly locals (the engine's registers and its
//! own stack), not in the program's linear memory, where a later read could
//! find them.

use super::soft::{
    CONSTANTS, GROUP_BYTES, KEY_PERIOD_OUTPUT_BYTES, KEY_WORDS, STATE_WORDS, double_rounds,
};
use core::arch::wasm32::{
    i8x16_shuffle, i32x4_add, i32x4_shl, u32x4, u32x4_extract_lane, u32x4_shr, u32x4_splat, v128,
    v128_or, v128_store, v128_xor,
};

/// First block counter of each group of a key period.
const GROUP_COUNTERS: [u32; 4] = [0, 4, 8, 12];

/// `x` rotated left by `N` bits in each 32-bit lane.
#[inline(always)]
fn rotate_left<const N: u32>(x: v128) -> v128 {
    match N {
        // Little-endian lanes: bytes [b0 b1 b2 b3] become [b2 b3 b0 b1].
        16 => i8x16_shuffle::<2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13>(x, x),
        // [b0 b1 b2 b3] become [b3 b0 b1 b2].
        8 => i8x16_shuffle::<3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14>(x, x),
        _ => v128_or(i32x4_shl(x, N), u32x4_shr(x, 32 - N)),
    }
}

/// RFC 8439's quarter round on rows `a`, `b`, `c`, `d`, four blocks at once.
#[inline(always)]
fn quarter_round(x: &mut [v128; STATE_WORDS], a: usize, b: usize, c: usize, d: usize) {
    x[a] = i32x4_add(x[a], x[b]);
    x[d] = rotate_left::<16>(v128_xor(x[d], x[a]));
    x[c] = i32x4_add(x[c], x[d]);
    x[b] = rotate_left::<12>(v128_xor(x[b], x[c]));
    x[a] = i32x4_add(x[a], x[b]);
    x[d] = rotate_left::<8>(v128_xor(x[d], x[a]));
    x[c] = i32x4_add(x[c], x[d]);
    x[b] = rotate_left::<7>(v128_xor(x[b], x[c]));
}

/// The rows of one group (block counters `counter` to `counter + 3`, nonce
/// zero) after `ROUNDS` rounds, the key added back into rows 4–11 only.
#[inline(always)]
fn group_rows<const ROUNDS: usize>(key: &[u32; KEY_WORDS], counter: u32) -> [v128; STATE_WORDS] {
    let double_rounds = const { double_rounds::<ROUNDS>() };
    let k = key.map(|w| u32x4_splat(w));
    let [c0, c1, c2, c3] = CONSTANTS.map(|w| u32x4_splat(w));
    let counters = u32x4(
        counter,
        counter.wrapping_add(1),
        counter.wrapping_add(2),
        counter.wrapping_add(3),
    );
    let zero = u32x4_splat(0);
    let mut x = [
        c0, c1, c2, c3, k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], counters, zero, zero, zero,
    ];
    for _ in 0..double_rounds {
        quarter_round(&mut x, 0, 4, 8, 12);
        quarter_round(&mut x, 1, 5, 9, 13);
        quarter_round(&mut x, 2, 6, 10, 14);
        quarter_round(&mut x, 3, 7, 11, 15);
        quarter_round(&mut x, 0, 5, 10, 15);
        quarter_round(&mut x, 1, 6, 11, 12);
        quarter_round(&mut x, 2, 7, 8, 13);
        quarter_round(&mut x, 3, 4, 9, 14);
    }
    for (row, key_row) in x[4..12].iter_mut().zip(k) {
        *row = i32x4_add(*row, key_row);
    }
    x
}

/// Stores row `w` at bytes `16 * w` to `16 * w + 16` of `out` (little-endian
/// lanes: the chacha8rand interleaving).
///
/// # Panics
/// If `out` is shorter than `16 * w + 16` (callers pass constant `w` and
/// whole groups).
#[inline(always)]
fn store_row(out: &mut [u8], w: usize, row: v128) {
    let bytes = &mut out[16 * w..16 * w + 16];
    // SAFETY: `bytes` is 16 writable bytes; `v128.store` has no alignment
    // requirement.
    unsafe { v128_store(bytes.as_mut_ptr().cast::<v128>(), row) };
}

/// Stores rows `0..$n` of `$x` to `$out`, written out so that the rows stay
/// values (a loop over a slice of them would give them an address).
macro_rules! store_rows {
    ($x:expr, $out:expr, $($w:literal)*) => {
        $( store_row($out, $w, $x[$w]); )*
    };
}

/// One chacha8rand key period (the same bytes as
/// [`soft::key_period`](super::soft::key_period)): 992 output bytes of `key`
/// to `out`, and `key` replaced by the next key.
///
/// # Security
/// `out` receives keystream; the old key is overwritten in place. The state
/// never enters linear memory (see the module documentation).
pub(crate) fn key_period<const ROUNDS: usize>(
    key: &mut [u32; KEY_WORDS],
    out: &mut [u8; KEY_PERIOD_OUTPUT_BYTES],
) {
    let (full_groups, last_group) = out.as_chunks_mut::<GROUP_BYTES>();
    let [counters @ .., last_counter] = GROUP_COUNTERS;
    for (group, counter) in full_groups.iter_mut().zip(counters) {
        let x = group_rows::<ROUNDS>(key, counter);
        store_rows!(x, group, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
    }
    // Rows 14 and 15 of the last group are the next key: row 14's lanes are
    // key words 0–3, row 15's are words 4–7.
    let x = group_rows::<ROUNDS>(key, last_counter);
    store_rows!(x, last_group, 0 1 2 3 4 5 6 7 8 9 10 11 12 13);
    let (r14, r15) = (x[14], x[15]);
    *key = [
        u32x4_extract_lane::<0>(r14),
        u32x4_extract_lane::<1>(r14),
        u32x4_extract_lane::<2>(r14),
        u32x4_extract_lane::<3>(r14),
        u32x4_extract_lane::<0>(r15),
        u32x4_extract_lane::<1>(r15),
        u32x4_extract_lane::<2>(r15),
        u32x4_extract_lane::<3>(r15),
    ];
}
