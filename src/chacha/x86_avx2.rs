//! AVX2 ChaCha in the chacha8rand layout: two groups (8 blocks) per pass, two
//! passes per key period.
//!
//! The state is word-sliced across 8 blocks: `ymm` register `x[w]` holds
//! state word `w` of the blocks with counters `8 * pass` to `8 * pass + 7`.
//! Its low 128 bits are word `w` of group `2 * pass` in lane order and its
//! high 128 bits word `w` of group `2 * pass + 1`: the output rows at
//! `256 * g + 16 * w`, stored two rows at a time after one `vperm2i128`. Rotations by 16 and 8 are byte shuffles, by 12 and 7 two
//! shifts and an or.
//!
//! The next key is known only at the end of the second pass, so the two
//! passes of a period run one after the other; the key stays in registers as
//! 8 broadcast vectors between periods.
//!
//! Every operation is an add, xor, fixed shift or fixed permutation: no branch
//! or address depends on key or output bytes.

use core::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_cvtsi256_si32, _mm256_or_si256, _mm256_permute2x128_si256,
    _mm256_permutevar8x32_epi32, _mm256_set1_epi32, _mm256_setr_epi8, _mm256_setr_epi32,
    _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_srli_epi32,
    _mm256_storeu_si256, _mm256_xor_si256,
};

use super::soft::{
    CONSTANTS, COUNTER_INDEX, GROUP_BLOCKS, GROUP_BYTES, KEY_INDEX, KEY_PERIOD_OUTPUT_BYTES,
    KEY_WORDS, STATE_WORDS, double_rounds,
};

/// Blocks per pass: two groups.
const PASS_BLOCKS: usize = 2 * GROUP_BLOCKS;

/// The state of two groups: `x[w]` lane `l` is word `w` of the pass's block `l`.
type PassState = [__m256i; STATE_WORDS];

/// Stores 256 bits to `out`, unaligned.
#[inline]
#[target_feature(enable = "avx2")]
fn store_256(out: &mut [u8; 32], v: __m256i) {
    // SAFETY:
    // - `out` is a valid, writable 32-byte region (a `&mut [u8; 32]`);
    // - `_mm256_storeu_si256` has no alignment requirement.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) }
}

/// Stores the pass's two groups: the low halves of the rows of `x` to
/// `low`, the high halves to `high`, 16 bytes per row, each stopping at
/// whichever ends first (a whole number of row pairs).
///
/// Rows `w` and `w + 1` are regrouped by halves (one `vperm2i128` each) and
/// stored 32 bytes at a time: LLVM merges separate 16-byte stores of the
/// halves into 32-byte ones anyway, with two shuffles per store.
#[inline]
#[target_feature(enable = "avx2")]
fn store_groups(x: &PassState, low: &mut [u8], high: &mut [u8]) {
    let (row_pairs, _) = x.as_chunks::<2>();
    let (low_chunks, _) = low.as_chunks_mut::<32>();
    for (chunk, [even, odd]) in low_chunks.iter_mut().zip(row_pairs) {
        store_256(chunk, _mm256_permute2x128_si256::<0x20>(*even, *odd));
    }
    let (high_chunks, _) = high.as_chunks_mut::<32>();
    for (chunk, [even, odd]) in high_chunks.iter_mut().zip(row_pairs) {
        store_256(chunk, _mm256_permute2x128_si256::<0x31>(*even, *odd));
    }
}

/// Rotates each 32-bit lane left by 16 (a byte shuffle).
#[inline]
#[target_feature(enable = "avx2")]
fn rotate_left_16(v: __m256i) -> __m256i {
    let bytes = _mm256_setr_epi8(
        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, //
        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
    );
    _mm256_shuffle_epi8(v, bytes)
}

/// Rotates each 32-bit lane left by 8 (a byte shuffle).
#[inline]
#[target_feature(enable = "avx2")]
fn rotate_left_8(v: __m256i) -> __m256i {
    let bytes = _mm256_setr_epi8(
        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, //
        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
    );
    _mm256_shuffle_epi8(v, bytes)
}

/// Rotates each 32-bit lane left by `L` (`R` = 32 - `L`).
#[inline]
#[target_feature(enable = "avx2")]
fn rotate_left<const L: i32, const R: i32>(v: __m256i) -> __m256i {
    const { assert!(L + R == 32) };
    _mm256_or_si256(_mm256_slli_epi32::<L>(v), _mm256_srli_epi32::<R>(v))
}

/// The ChaCha quarter round on rows `a`, `b`, `c`, `d` of the pass's 8 blocks.
#[inline]
#[target_feature(enable = "avx2")]
fn quarter_round(x: &mut PassState, a: usize, b: usize, c: usize, d: usize) {
    x[a] = _mm256_add_epi32(x[a], x[b]);
    x[d] = rotate_left_16(_mm256_xor_si256(x[d], x[a]));
    x[c] = _mm256_add_epi32(x[c], x[d]);
    x[b] = rotate_left::<12, 20>(_mm256_xor_si256(x[b], x[c]));
    x[a] = _mm256_add_epi32(x[a], x[b]);
    x[d] = rotate_left_8(_mm256_xor_si256(x[d], x[a]));
    x[c] = _mm256_add_epi32(x[c], x[d]);
    x[b] = rotate_left::<7, 25>(_mm256_xor_si256(x[b], x[c]));
}

/// A column round and a diagonal round (RFC 8439 `inner_block`).
#[inline]
#[target_feature(enable = "avx2")]
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

/// One pass: the 8 blocks with counters `counters` under the broadcast key
/// `k`, with the feed-forward on the key words only.
#[inline]
#[target_feature(enable = "avx2")]
fn pass<const ROUNDS: usize>(k: &[__m256i; KEY_WORDS], counters: __m256i) -> PassState {
    let double_rounds = const { double_rounds::<ROUNDS>() };

    let mut x: PassState = [_mm256_setzero_si256(); STATE_WORDS];
    for (row, constant) in x[..KEY_INDEX].iter_mut().zip(CONSTANTS) {
        *row = _mm256_set1_epi32(constant as i32);
    }
    x[KEY_INDEX..COUNTER_INDEX].copy_from_slice(k);
    x[COUNTER_INDEX] = counters;
    // The nonce rows, words 13–15, stay zero.

    for _ in 0..double_rounds {
        inner_block(&mut x);
    }
    for (row, key_row) in x[KEY_INDEX..COUNTER_INDEX].iter_mut().zip(k) {
        *row = _mm256_add_epi32(*row, *key_row);
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
#[target_feature(enable = "avx2")]
pub(crate) fn key_periods<const ROUNDS: usize>(
    key: &mut [u32; KEY_WORDS],
    out: &mut [[u8; KEY_PERIOD_OUTPUT_BYTES]],
) {
    // Broadcast key words: `k[i]` is key word `i` in every lane.
    let mut k: [__m256i; KEY_WORDS] = key.map(|word| _mm256_set1_epi32(word as i32));
    // Lane `l` of pass `p` is block `8 * p + l` of the period.
    let first_counters = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let second_counters = _mm256_add_epi32(first_counters, _mm256_set1_epi32(PASS_BLOCKS as i32));

    for period in out {
        let (first, second) = period.split_at_mut(2 * GROUP_BYTES);

        // Groups 0 and 1.
        let x = pass::<ROUNDS>(&k, first_counters);
        let (group0, group1) = first.split_at_mut(GROUP_BYTES);
        store_groups(&x, group0, group1);

        // Groups 2 and 3; the stores to group 3 stop after its words 0–13
        // (992 = 3 × 256 + 224).
        let x = pass::<ROUNDS>(&k, second_counters);
        let (group2, group3) = second.split_at_mut(GROUP_BYTES);
        store_groups(&x, group2, group3);

        // The next key: words 14 and 15 of group 3 (lanes 4–7 of the second
        // pass), in that order, each word broadcast to every lane.
        for (i, next) in k.iter_mut().enumerate() {
            let row = x[STATE_WORDS - KEY_WORDS / GROUP_BLOCKS + i / GROUP_BLOCKS];
            let lane = _mm256_set1_epi32((GROUP_BLOCKS + i % GROUP_BLOCKS) as i32);
            *next = _mm256_permutevar8x32_epi32(row, lane);
        }
    }

    for (word, broadcast) in key.iter_mut().zip(k) {
        *word = _mm256_cvtsi256_si32(broadcast) as u32;
    }
}
