//! NEON ChaCha in the chacha8rand layout: two groups interleaved per pass,
//! two passes per key period.
//!
//! A group is word-sliced across its 4 blocks: `uint32x4_t` row `w` holds
//! state word `w` of the group's blocks in lane order, which is exactly the 16
//! output bytes at `256 * g + 16 * w`, stored straight. Two groups run side
//! by side (every step of the quarter round is issued for both before the
//! next), so a wide core has 8 independent quarter rounds per half round
//! instead of 4 serial dependency chains. Rotation by 16 is `rev32` on 16-bit
//! halves; the others are a shift and a shift-right-insert (`shl` + `sri`).
//!
//! The key stays in registers as 8 broadcast vectors between periods.
//!
//! Every operation is an add, xor, fixed shift or fixed permutation: no branch
//! or address depends on key or output bytes.

use core::arch::aarch64::{
    uint32x4_t, vaddq_u32, vdupq_laneq_u32, vdupq_n_u32, veorq_u32, vgetq_lane_u32, vld1q_u32,
    vreinterpretq_u8_u32, vreinterpretq_u16_u32, vreinterpretq_u32_u16, vrev32q_u16, vshlq_n_u32,
    vsriq_n_u32, vst1q_u8,
};

use super::soft::{
    CONSTANTS, COUNTER_INDEX, GROUP_BLOCKS, GROUP_BYTES, KEY_INDEX, KEY_PERIOD_OUTPUT_BYTES,
    KEY_WORDS, STATE_WORDS, double_rounds,
};

/// Bytes of one state word of one group (four 32-bit lanes).
const ROW_BYTES: usize = 16;

/// Groups computed side by side in one pass.
const PASS_GROUPS: usize = 2;

/// The state of one group: `x[w]` lane `l` is word `w` of the group's block `l`.
type GroupState = [uint32x4_t; STATE_WORDS];

/// The states of a pass's groups.
type PassState = [GroupState; PASS_GROUPS];

/// Stores a row to `out` as four little-endian words.
#[inline]
#[target_feature(enable = "neon")]
fn store_row(out: &mut [u8; ROW_BYTES], v: uint32x4_t) {
    // The lanes' bytes in memory order are the little-endian words (this
    // backend is compiled for little-endian targets only).
    let bytes = vreinterpretq_u8_u32(v);
    // SAFETY:
    // - `out` is a valid, writable 16-byte region (a `&mut [u8; 16]`);
    // - `vst1q_u8` has no alignment requirement beyond `u8`'s.
    unsafe { vst1q_u8(out.as_mut_ptr(), bytes) }
}

/// The four lanes `[first, first + 1, first + 2, first + 3]`.
#[inline]
#[target_feature(enable = "neon")]
fn counters(first: u32) -> uint32x4_t {
    let lanes: [u32; GROUP_BLOCKS] = [first, first + 1, first + 2, first + 3];
    // SAFETY:
    // - `lanes` is a valid, readable array of four `u32`s;
    // - `vld1q_u32` needs only `u32` alignment, which the array has.
    unsafe { vld1q_u32(lanes.as_ptr()) }
}

/// Stores a group's rows to the 16-byte rows of `out` in order, stopping at
/// whichever ends first.
#[inline]
#[target_feature(enable = "neon")]
fn store_group(x: &GroupState, out: &mut [u8]) {
    let (rows, _) = out.as_chunks_mut::<ROW_BYTES>();
    for (row, word) in rows.iter_mut().zip(x) {
        store_row(row, *word);
    }
}

/// Rotates each 32-bit lane left by 16 (swaps the 16-bit halves).
#[inline]
#[target_feature(enable = "neon")]
fn rotate_left_16(v: uint32x4_t) -> uint32x4_t {
    vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(v)))
}

/// Rotates each 32-bit lane left by `L` (`R` = 32 - `L`): the shifted-left
/// value with the top `L` bits shifted right into its low bits.
#[inline]
#[target_feature(enable = "neon")]
fn rotate_left<const L: i32, const R: i32>(v: uint32x4_t) -> uint32x4_t {
    const { assert!(L + R == 32) };
    vsriq_n_u32::<R>(vshlq_n_u32::<L>(v), v)
}

/// The ChaCha quarter round on rows `a`, `b`, `c`, `d` of both groups, each
/// step issued for both groups before the next.
#[inline]
#[target_feature(enable = "neon")]
fn quarter_round(x: &mut PassState, a: usize, b: usize, c: usize, d: usize) {
    for g in x.iter_mut() {
        g[a] = vaddq_u32(g[a], g[b]);
    }
    for g in x.iter_mut() {
        g[d] = rotate_left_16(veorq_u32(g[d], g[a]));
    }
    for g in x.iter_mut() {
        g[c] = vaddq_u32(g[c], g[d]);
    }
    for g in x.iter_mut() {
        g[b] = rotate_left::<12, 20>(veorq_u32(g[b], g[c]));
    }
    for g in x.iter_mut() {
        g[a] = vaddq_u32(g[a], g[b]);
    }
    for g in x.iter_mut() {
        g[d] = rotate_left::<8, 24>(veorq_u32(g[d], g[a]));
    }
    for g in x.iter_mut() {
        g[c] = vaddq_u32(g[c], g[d]);
    }
    for g in x.iter_mut() {
        g[b] = rotate_left::<7, 25>(veorq_u32(g[b], g[c]));
    }
}

/// A column round and a diagonal round (RFC 8439 `inner_block`) on both groups.
#[inline]
#[target_feature(enable = "neon")]
fn inner_block(x: &mut PassState) {
    quarter_round(x, 0, 4, 8, 12);
    quarter_round(x, 1, 5, 9, 13);
    quarter_round(x, 2, 6, 10, 14);
    quarter_round(x, 3, 7, 11, 15);
    quarter_round(x, 0, 5, 10, 15);
    quarter_round(x, 1, 6, 11, 12);
    quarter_round(x, 2, 7, 8, 13);
    quarter_round(x, 3, 4, 9, 14);
}

/// One pass: the groups with first block counters `first` and `first + 4`
/// under the broadcast key `k`, with the feed-forward on the key words only.
#[inline]
#[target_feature(enable = "neon")]
fn pass<const ROUNDS: usize>(k: &[uint32x4_t; KEY_WORDS], first: u32) -> PassState {
    let double_rounds = const { double_rounds::<ROUNDS>() };

    let mut x: PassState = [[vdupq_n_u32(0); STATE_WORDS]; PASS_GROUPS];
    for (g, group_first) in x.iter_mut().zip([first, first + GROUP_BLOCKS as u32]) {
        for (row, constant) in g[..KEY_INDEX].iter_mut().zip(CONSTANTS) {
            *row = vdupq_n_u32(constant);
        }
        g[KEY_INDEX..COUNTER_INDEX].copy_from_slice(k);
        g[COUNTER_INDEX] = counters(group_first);
        // The nonce rows, words 13–15, stay zero.
    }

    for _ in 0..double_rounds {
        inner_block(&mut x);
    }
    for g in &mut x {
        for (row, key_row) in g[KEY_INDEX..COUNTER_INDEX].iter_mut().zip(k) {
            *row = vaddq_u32(*row, *key_row);
        }
    }
    x
}

/// `out.len()` chacha8rand key periods with `ROUNDS` rounds, chained: period
/// `i` is computed under the key left by period `i - 1`, starting from `*key`;
/// `*key` ends as the key after the last period (unchanged if `out` is empty).
/// Same bytes as repeated `soft::key_period`.
///
/// # Security
/// `out` receives keystream. The state and key live in vector registers (and
/// any spill slots the compiler picks), which safe code cannot wipe; no
/// memory this function owns holds key or keystream.
#[target_feature(enable = "neon")]
pub(crate) fn key_periods<const ROUNDS: usize>(
    key: &mut [u32; KEY_WORDS],
    out: &mut [[u8; KEY_PERIOD_OUTPUT_BYTES]],
) {
    // Broadcast key words: `k[i]` is key word `i` in every lane.
    let mut k: [uint32x4_t; KEY_WORDS] = key.map(|word| vdupq_n_u32(word));

    for period in out {
        let (first, second) = period.split_at_mut(2 * GROUP_BYTES);

        // Groups 0 and 1 (block counters 0–7).
        let [x0, x1] = pass::<ROUNDS>(&k, 0);
        let (group0, group1) = first.split_at_mut(GROUP_BYTES);
        store_group(&x0, group0);
        store_group(&x1, group1);

        // Groups 2 and 3 (block counters 8–15); the store to group 3 stops
        // after its words 0–13 (992 = 3 × 256 + 224).
        let [x2, x3] = pass::<ROUNDS>(&k, (2 * GROUP_BLOCKS) as u32);
        let (group2, group3) = second.split_at_mut(GROUP_BYTES);
        store_group(&x2, group2);
        store_group(&x3, group3);

        // The next key: words 14 and 15 of group 3, in that order, each word
        // broadcast to every lane.
        let (low, high) = (x3[STATE_WORDS - 2], x3[STATE_WORDS - 1]);
        k = [
            vdupq_laneq_u32::<0>(low),
            vdupq_laneq_u32::<1>(low),
            vdupq_laneq_u32::<2>(low),
            vdupq_laneq_u32::<3>(low),
            vdupq_laneq_u32::<0>(high),
            vdupq_laneq_u32::<1>(high),
            vdupq_laneq_u32::<2>(high),
            vdupq_laneq_u32::<3>(high),
        ];
    }

    for (word, broadcast) in key.iter_mut().zip(k) {
        *word = vgetq_lane_u32::<0>(broadcast);
    }
}
