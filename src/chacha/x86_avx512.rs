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
    __m256i, __m512i, _mm_cvtsi128_si32, _mm256_storeu_si256, _mm512_add_epi32,
    _mm512_castsi512_si128, _mm512_castsi512_si256, _mm512_permutexvar_epi32, _mm512_rol_epi32,
    _mm512_set1_epi32, _mm512_setr_epi32, _mm512_setzero_si512, _mm512_shuffle_i32x4,
    _mm512_storeu_si512, _mm512_xor_si512,
};

use super::soft::{
    CONSTANTS, COUNTER_INDEX, GROUP_BLOCKS, KEY_INDEX, KEY_PERIOD_OUTPUT_BYTES, KEY_WORDS,
    STATE_WORDS, double_rounds,
};

/// The state of a whole key period: `x[w]` lane `l` is word `w` of block `l`.
type PeriodState = [__m512i; STATE_WORDS];

/// Stores 512 bits to `out`, unaligned.
#[inline]
#[target_feature(enable = "avx512f")]
fn store_512(out: &mut [u8; 64], v: __m512i) {
    // SAFETY:
    // - `out` is a valid, writable 64-byte region (a `&mut [u8; 64]`);
    // - `_mm512_storeu_si512` has no alignment requirement.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), v) }
}

/// Stores 256 bits to `out`, unaligned.
#[inline]
#[target_feature(enable = "avx512f")]
fn store_256(out: &mut [u8; 32], v: __m256i) {
    // SAFETY:
    // - `out` is a valid, writable 32-byte region (a `&mut [u8; 32]`);
    // - `_mm256_storeu_si256` has no alignment requirement;
    // - AVX is implied by the enabled `avx512f`.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) }
}

/// Transposes the 128-bit lanes of four rows: `rows[i]` lane `g` becomes
/// lane `i` of result `g`. For rows `w..w + 4`, result `g` is group `g`'s
/// words `w..w + 4`: the 64 output bytes at `256 * g + 16 * w`.
///
/// Eight `vshufi32x4`, where storing each 128-bit lane on its own would cost
/// an extract per lane (LLVM merges such stores back into 512-bit ones with
/// a longer chain of inserts).
#[inline]
#[target_feature(enable = "avx512f")]
fn transpose_lanes(rows: [__m512i; 4]) -> [__m512i; 4] {
    let [a, b, c, d] = rows;
    // [a0 a1 b0 b1], [a2 a3 b2 b3], [c0 c1 d0 d1], [c2 c3 d2 d3]
    let ab01 = _mm512_shuffle_i32x4::<0b01_00_01_00>(a, b);
    let ab23 = _mm512_shuffle_i32x4::<0b11_10_11_10>(a, b);
    let cd01 = _mm512_shuffle_i32x4::<0b01_00_01_00>(c, d);
    let cd23 = _mm512_shuffle_i32x4::<0b11_10_11_10>(c, d);
    // [a0 b0 c0 d0], [a1 b1 c1 d1], [a2 b2 c2 d2], [a3 b3 c3 d3]
    [
        _mm512_shuffle_i32x4::<0b10_00_10_00>(ab01, cd01),
        _mm512_shuffle_i32x4::<0b11_01_11_01>(ab01, cd01),
        _mm512_shuffle_i32x4::<0b10_00_10_00>(ab23, cd23),
        _mm512_shuffle_i32x4::<0b11_01_11_01>(ab23, cd23),
    ]
}

/// Writes a period's state to its 992 output bytes: group `g`, word `w` at
/// `256 * g + 16 * w`, except group 3's words 14 and 15 (the next key).
#[inline]
#[target_feature(enable = "avx512f")]
fn store_period(x: &PeriodState, out: &mut [u8; KEY_PERIOD_OUTPUT_BYTES]) {
    // Words `4 * q..4 * q + 4` of group `g` are the 64-byte chunk `4 * g + q`.
    let (chunks, tail) = out.as_chunks_mut::<64>();
    let (rows, _) = x.as_chunks::<4>();
    for (q, four_rows) in rows.iter().enumerate() {
        let [g0, g1, g2, g3] = transpose_lanes(*four_rows);
        store_512(&mut chunks[q], g0);
        store_512(&mut chunks[4 + q], g1);
        store_512(&mut chunks[8 + q], g2);
        if let Some(chunk) = chunks.get_mut(12 + q) {
            store_512(chunk, g3);
        } else {
            // Group 3's words 12 and 13; words 14 and 15 are the next key.
            let tail: &mut [u8; 32] = tail.try_into().expect("992 = 15 × 64 + 32");
            store_256(tail, _mm512_castsi512_si256(g3));
        }
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

        store_period(&x, period);

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
