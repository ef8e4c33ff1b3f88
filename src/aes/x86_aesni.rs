//! AES-256 with AES-NI on 128-bit registers, eight blocks in flight.
//!
//! AESENC has a latency of several cycles but a throughput of one or two per
//! cycle, so a single block would leave the unit mostly idle: eight
//! independent blocks per round keep it busy (Gueron, "Intel Advanced
//! Encryption Standard (AES) New Instructions Set", white paper, §"parallelizing").
//!
//! The key schedule does not use AESKEYGENASSIST (whose round constant is an
//! immediate, and which is slow on several cores) but the equivalent
//! AESENCLAST form: when all four columns of the state are the same word,
//! ShiftRows is the identity, so `AESENCLAST(broadcast(w), c)` is
//! `broadcast(SubWord(w)) ^ c`. Both are constant time.
//!
//! The VAES backends reuse this key schedule ([`expand_key`],
//! [`round_key_pair`]; VAES CPUs all have AES-NI).

use core::arch::x86_64::{
    __m128i, _mm_aesenc_si128, _mm_aesenclast_si128, _mm_loadu_si128, _mm_or_si128, _mm_set_epi64x,
    _mm_set1_epi32, _mm_setzero_si128, _mm_shuffle_epi32, _mm_slli_epi32, _mm_slli_si128,
    _mm_srli_epi32, _mm_storeu_si128, _mm_xor_si128,
};

use super::{BLOCK_BYTES, NEXT_KEY_BYTES, POOL_OUTPUT_BYTES, ROUNDS};

/// Blocks encrypted together: enough to cover AESENC's latency.
const BATCH_BLOCKS: usize = 8;

/// One register: one block.
type Reg = __m128i;

/// Bytes in one register.
const LANE_BYTES: usize = BLOCK_BYTES;

/// Registers encrypted together.
const BATCH_LANES: usize = BATCH_BLOCKS;

/// Output bytes of a pool's first batch: its blocks after the next key.
const HEAD_OUTPUT_BYTES: usize = BATCH_BLOCKS * BLOCK_BYTES - NEXT_KEY_BYTES;

const _: () =
    assert!((POOL_OUTPUT_BYTES - HEAD_OUTPUT_BYTES).is_multiple_of(BATCH_BLOCKS * BLOCK_BYTES));

/// The expanded key: round key `r` as a register, bytes in FIPS 197 order.
pub(super) type RoundKeys = [__m128i; ROUNDS + 1];

/// Loads one block (bytes in memory order).
#[inline(always)]
fn load(block: &[u8; BLOCK_BYTES]) -> __m128i {
    // SAFETY: `block` is 16 readable bytes, exactly what is read.
    // SAFETY: `loadu` has no alignment requirement.
    // SAFETY: SSE2 (the instruction's only feature) is part of the x86_64 baseline.
    unsafe { _mm_loadu_si128(block.as_ptr().cast()) }
}

/// Stores one block (bytes in memory order).
#[inline(always)]
fn store(block: &mut [u8; BLOCK_BYTES], value: __m128i) {
    // SAFETY: `block` is 16 writable bytes, exactly what is written.
    // SAFETY: `storeu` has no alignment requirement.
    // SAFETY: SSE2 (the instruction's only feature) is part of the x86_64 baseline.
    unsafe { _mm_storeu_si128(block.as_mut_ptr().cast(), value) }
}

/// `w0, w1 ^ w0, w2 ^ w1 ^ w0, w3 ^ w2 ^ w1 ^ w0`: the running XOR of the
/// previous round key's words that KeyExpansion adds word by word.
#[inline]
#[target_feature(enable = "aes")]
fn prefix_xor(x: __m128i) -> __m128i {
    let x = _mm_xor_si128(x, _mm_slli_si128::<4>(x));
    _mm_xor_si128(x, _mm_slli_si128::<8>(x))
}

/// Steps of [`expand_key_step`]: step 0 is the key itself (round keys 0
/// and 1), step `s` in `1..8` adds round keys `2s` and `2s + 1` (14 only, at
/// step 7).
pub(super) const EXPAND_STEPS: usize = ROUNDS / 2 + 1;

/// Round keys `2s` and `2s + 1` of AES-256 (FIPS 197 §5.2) from `2s - 2` and
/// `2s - 1`, for a step `s` in `1..EXPAND_STEPS` (the second is meaningless at
/// the last step, where round key 15 does not exist).
///
/// Round keys `2i` and `2i + 1` are words `8i..8i + 8`; each new even round
/// key adds `SubWord(RotWord(w)) ^ Rcon` of the last word before it, each odd
/// one `SubWord(w)`.
///
/// # Security
///
/// Constant time: AESENCLAST, shuffles and XORs, no branch or index on the key
/// (the step is public).
#[inline]
#[target_feature(enable = "aes")]
pub(super) fn round_key_pair(even: __m128i, odd: __m128i, step: usize) -> [__m128i; 2] {
    debug_assert!((1..EXPAND_STEPS).contains(&step));
    // Rcon (x^(s-1), AES-256 needs x^0..x^6, so no reduction) in every column.
    let rcon = _mm_set1_epi32(1 << (step - 1));
    // Word 3 in all four columns, then RotWord of each: in the register's
    // little-endian words, a right rotation by 8 bits (SSE2 only, so no SSSE3
    // shuffle is needed beside AES-NI).
    let w3 = _mm_shuffle_epi32::<0xff>(odd);
    let rotated = _mm_or_si128(_mm_srli_epi32::<8>(w3), _mm_slli_epi32::<24>(w3));
    let even = _mm_xor_si128(prefix_xor(even), _mm_aesenclast_si128(rotated, rcon));
    let t = _mm_aesenclast_si128(_mm_shuffle_epi32::<0xff>(even), _mm_setzero_si128());
    [even, _mm_xor_si128(prefix_xor(odd), t)]
}

/// One step of AES-256 KeyExpansion (FIPS 197 §5.2) into `rk` (see
/// [`EXPAND_STEPS`]): step `s > 0` reads round keys `2s - 2` and `2s - 1`,
/// written by the step before. Split into steps so that the pool kernel can
/// spread the next key's expansion over the current pool's batches.
#[inline]
#[target_feature(enable = "aes")]
fn expand_key_step(key: &[u8; 32], rk: &mut RoundKeys, step: usize) {
    if step == 0 {
        let (halves, _) = key.as_chunks::<BLOCK_BYTES>();
        rk[0] = load(&halves[0]);
        rk[1] = load(&halves[1]);
    } else {
        let r = 2 * step;
        let [even, odd] = round_key_pair(rk[r - 2], rk[r - 1], step);
        rk[r] = even;
        if r < ROUNDS {
            rk[r + 1] = odd;
        }
    }
}

/// AES-256 KeyExpansion (FIPS 197 §5.2) into `rk`: all of
/// [`expand_key_step`]'s steps.
#[inline]
#[target_feature(enable = "aes")]
pub(super) fn expand_key(key: &[u8; 32], rk: &mut RoundKeys) {
    for step in 0..EXPAND_STEPS {
        expand_key_step(key, rk, step);
    }
}

/// FIPS 197 Cipher on a batch of blocks, in registers.
#[inline]
#[target_feature(enable = "aes")]
fn encrypt_batch(rk: &RoundKeys, blocks: &mut [__m128i; BATCH_BLOCKS]) {
    for b in blocks.iter_mut() {
        *b = _mm_xor_si128(*b, rk[0]);
    }
    for round_key in &rk[1..ROUNDS] {
        for b in blocks.iter_mut() {
            *b = _mm_aesenc_si128(*b, *round_key);
        }
    }
    for b in blocks.iter_mut() {
        *b = _mm_aesenclast_si128(*b, rk[ROUNDS]);
    }
}

/// The counter blocks `first..first + 8` of a pool (`first + 8 <= 256`): the
/// big-endian counter has only its last byte set, the top byte of the
/// register's high half.
#[inline]
#[target_feature(enable = "aes")]
fn pool_counters(first: usize) -> [__m128i; BATCH_BLOCKS] {
    let mut blocks = [_mm_setzero_si128(); BATCH_BLOCKS];
    for (i, b) in blocks.iter_mut().enumerate() {
        *b = _mm_set_epi64x(((first + i) as i64) << 56, 0);
    }
    blocks
}

/// A pool's first batch: its first two blocks are the next key, the rest is
/// the head of the pool's output.
#[inline]
#[target_feature(enable = "aes")]
fn store_head(key: &mut [u8; 32], head: &mut [u8; HEAD_OUTPUT_BYTES], lanes: &[Reg; BATCH_LANES]) {
    let (key_halves, _) = key.as_chunks_mut::<BLOCK_BYTES>();
    store(&mut key_halves[0], lanes[0]);
    store(&mut key_halves[1], lanes[1]);
    let (head_blocks, _) = head.as_chunks_mut::<BLOCK_BYTES>();
    for (dst, b) in head_blocks.iter_mut().zip(&lanes[2..]) {
        store(dst, *b);
    }
}

pool_kernel!(features = "aes", zero = _mm_setzero_si128());
