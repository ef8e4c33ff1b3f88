//! AVX-512F ChaCha in the chacha8rand layout: a whole key period per pass.
//!
//! The state is word-sliced across all 16 blocks of a key period: `zmm`
//! register `x[w]` holds state word `w` of the blocks with counters 0 to 15,
//! one per 32-bit lane. Its 128-bit lane `g` is therefore state word `w` of
//! group `g`'s four blocks in lane order, which is exactly the 16 output bytes
//! at `256 * g + 16 * w` of the period: each one is stored straight, with no
//! transposition. Rotations are single `vprold`s.
//!
//! Key periods chain (the next key is the last 32 bytes of the period), so the
//! kernel keeps the key in registers as 8 broadcast vectors between periods and
//! touches `key` only on entry and exit.
//!
//! Every operation is an add, xor, fixed rotation or fixed permutation: no
//! branch or address depends on key or output bytes.

use core::arch::x86_64::{
    __m128i, __m512i, _mm_cvtsi128_si32, _mm_storeu_si128, _mm512_add_epi32,
    _mm512_castsi512_si128, _mm512_extracti32x4_epi32, _mm512_permutexvar_epi32, _mm512_rol_epi32,
    _mm512_set1_epi32, _mm512_setr_epi32, _mm512_setzero_si512, _mm512_xor_si512,
};

use super::soft::{
    CONSTANTS, COUNTER_INDEX, GROUP_BLOCKS, GROUP_BYTES, KEY_INDEX, KEY_PERIOD_OUTPUT_BYTES,
    KEY_WORDS, STATE_WORDS, double_rounds,
};

/// Bytes of one state word of one group (four 32-bit lanes).
const ROW_BYTES: usize = 16;

/// The state of a whole key period: `x[w]` lane `l` is word `w` of block `l`.
type PeriodState = [__m512i; STATE_WORDS];

/// Stores 128 bits to `out`, unaligned.
#[inline]
#[target_feature(enable = "avx512f")]
fn store_row(out: &mut [u8; ROW_BYTES], v: __m128i) {
    // SAFETY:
    // - `out` is a valid, writable 16-byte region (a `&mut [u8; 16]`);
    // - `_mm_storeu_si128` has no alignment requirement;
    // - SSE2 is implied by the enabled `avx512f`.
    unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), v) }
}

/// Stores 128-bit lane `G` of each row of `x`, that is group `G`'s words,
/// to the 16-byte rows of `out` in order, stopping at whichever ends first.
#[inline]
#[target_feature(enable = "avx512f")]
fn store_group<const G: i32>(x: &PeriodState, out: &mut [u8]) {
    let (rows, _) = out.as_chunks_mut::<ROW_BYTES>();
    for (row, word) in rows.iter_mut().zip(x) {
        store_row(row, _mm512_extracti32x4_epi32::<G>(*word));
    }
}

/// The ChaCha quarter round on rows `a`, `b`, `c`, `d` of all 16 blocks.
#[inline]
#[target_feature(enable = "avx512f")]
fn quarter_round(x: &mut PeriodState, a: usize, b: usize, c: usize, d: usize) {
    x[a] = _mm512_add_epi32(x[a], x[b]);
    x[d] = _mm512_rol_epi32::<16>(_mm512_xor_si512(x[d], x[a]));
    x[c] = _mm512_add_epi32(x[c], x[d]);
    x[b] = _mm512_rol_epi32::<12>(_mm512_xor_si512(x[b], x[c]));
    x[a] = _mm512_add_epi32(x[a], x[b]);
    x[d] = _mm512_rol_epi32::<8>(_mm512_xor_si512(x[d], x[a]));
    x[c] = _mm512_add_epi32(x[c], x[d]);
    x[b] = _mm512_rol_epi32::<7>(_mm512_xor_si512(x[b], x[c]));
}

/// A column round and a diagonal round (RFC 8439 `inner_block`).
#[inline]
#[target_feature(enable = "avx512f")]
fn inner_block(x: &mut PeriodState) {
    quarter_round(x, 0, 4, 8, 12);
    quarter_round(x, 1, 5, 9, 13);
    quarter_round(x, 2, 6, 10, 14);
    quarter_round(x, 3, 7, 11, 15);
    quarter_round(x, 0, 5, 10, 15);
    quarter_round(x, 1, 6, 11, 12);
    quarter_round(x, 2, 7, 8, 13);
    quarter_round(x, 3, 4, 9, 14);
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
#[target_feature(enable = "avx512f")]
pub(crate) fn key_periods<const ROUNDS: usize>(
    key: &mut [u32; KEY_WORDS],
    out: &mut [[u8; KEY_PERIOD_OUTPUT_BYTES]],
) {
    let double_rounds = const { double_rounds::<ROUNDS>() };

    // Broadcast key words: `k[i]` is key word `i` in every lane.
    let mut k: [__m512i; KEY_WORDS] = key.map(|word| _mm512_set1_epi32(word as i32));
    // Lane `l` is block `l` of the period: counters 0 to 15.
    let counters = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);

    for period in out {
        let mut x: PeriodState = [_mm512_setzero_si512(); STATE_WORDS];
        for (row, constant) in x[..KEY_INDEX].iter_mut().zip(CONSTANTS) {
            *row = _mm512_set1_epi32(constant as i32);
        }
        x[KEY_INDEX..COUNTER_INDEX].copy_from_slice(&k);
        x[COUNTER_INDEX] = counters;
        // The nonce rows, words 13–15, stay zero.

        for _ in 0..double_rounds {
            inner_block(&mut x);
        }
        // Feed-forward on the key words only (chacha8rand).
        for (row, key_row) in x[KEY_INDEX..COUNTER_INDEX].iter_mut().zip(&k) {
            *row = _mm512_add_epi32(*row, *key_row);
        }

        // Group `g` starts at byte `256 * g`; each store stops after 16 rows
        // or at the end of the period (992 = 3 × 256 + 224: group 3 gets its
        // words 0–13).
        store_group::<0>(&x, period);
        store_group::<1>(&x, &mut period[GROUP_BYTES..]);
        store_group::<2>(&x, &mut period[2 * GROUP_BYTES..]);
        store_group::<3>(&x, &mut period[3 * GROUP_BYTES..]);

        // The next key: words 14 and 15 of group 3 (blocks 12–15), in that
        // order, each word broadcast to every lane.
        let last_lanes = (STATE_WORDS - GROUP_BLOCKS) as i32;
        for (i, next) in k.iter_mut().enumerate() {
            let row = x[STATE_WORDS - KEY_WORDS / GROUP_BLOCKS + i / GROUP_BLOCKS];
            let lane = _mm512_set1_epi32(last_lanes + (i % GROUP_BLOCKS) as i32);
            *next = _mm512_permutexvar_epi32(lane, row);
        }
    }

    for (word, broadcast) in key.iter_mut().zip(k) {
        *word = _mm_cvtsi128_si32(_mm512_castsi512_si128(broadcast)) as u32;
    }
}
