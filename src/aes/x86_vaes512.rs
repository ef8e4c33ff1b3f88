//! AES-256 with VAES on 512-bit registers (AVX512F + VAES): four blocks per
//! register, eight registers (32 blocks) in flight.
//!
//! VAESENC on a ZMM register is AESENC on each 128-bit quarter, with each
//! quarter's own round key; the round keys are therefore broadcast to all four
//! quarters once per key (15 registers, which stay in registers: AVX-512 has
//! 32). The key schedule is AES-NI's ([`super::x86_aesni::expand_key`]).

use core::arch::x86_64::{
    __m256i, __m512i, _mm_setzero_si128, _mm256_storeu_si256, _mm512_aesenc_epi128,
    _mm512_aesenclast_epi128, _mm512_broadcast_i32x4, _mm512_castsi512_si256,
    _mm512_extracti64x4_epi64, _mm512_loadu_si512, _mm512_set_epi64, _mm512_setzero_si512,
    _mm512_storeu_si512, _mm512_xor_si512,
};

use zeroize::Zeroize;

use super::x86_aesni::{self, RoundKeys};
use super::{BLOCK_BYTES, NEXT_KEY_BYTES, POOL_OUTPUT_BYTES, ROUNDS};

/// Blocks in one register.
const LANE_BLOCKS: usize = 4;

/// Bytes in one register.
const LANE_BYTES: usize = LANE_BLOCKS * BLOCK_BYTES;

/// Registers encrypted together: enough to cover VAESENC's latency.
const BATCH_LANES: usize = 8;

/// Blocks encrypted together.
const BATCH_BLOCKS: usize = BATCH_LANES * LANE_BLOCKS;

/// Output bytes of a pool's first batch: its blocks after the next key.
const HEAD_OUTPUT_BYTES: usize = BATCH_BLOCKS * BLOCK_BYTES - NEXT_KEY_BYTES;

// The first register of a pool is the next key (its low half) and two output
// blocks.
const _: () = assert!(NEXT_KEY_BYTES == LANE_BYTES / 2);
const _: () =
    assert!((POOL_OUTPUT_BYTES - HEAD_OUTPUT_BYTES).is_multiple_of(BATCH_BLOCKS * BLOCK_BYTES));

/// One register: four blocks.
type Reg = __m512i;

/// Loads four blocks (bytes in memory order).
#[inline]
#[target_feature(enable = "avx512f")]
fn load(src: &[u8; LANE_BYTES]) -> __m512i {
    // SAFETY: `src` is 64 readable bytes, exactly what is read.
    // SAFETY: `loadu` has no alignment requirement.
    // SAFETY: AVX512F, the instruction's feature, is enabled on this function.
    unsafe { _mm512_loadu_si512(src.as_ptr().cast()) }
}

/// Stores four blocks (bytes in memory order).
#[inline]
#[target_feature(enable = "avx512f")]
fn store(dst: &mut [u8; LANE_BYTES], value: __m512i) {
    // SAFETY: `dst` is 64 writable bytes, exactly what is written.
    // SAFETY: `storeu` has no alignment requirement.
    // SAFETY: AVX512F, the instruction's feature, is enabled on this function.
    unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), value) }
}

/// Stores two blocks (bytes in memory order).
#[inline]
#[target_feature(enable = "avx")]
fn store_half(dst: &mut [u8; LANE_BYTES / 2], value: __m256i) {
    // SAFETY: `dst` is 32 writable bytes, exactly what is written.
    // SAFETY: `storeu` has no alignment requirement.
    // SAFETY: AVX, the instruction's feature, is enabled on this function.
    unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), value) }
}

/// Expands `key` and broadcasts each round key to the four quarters.
#[inline]
#[target_feature(enable = "aes,avx512f,vaes")]
fn expand_key(key: &[u8; 32], wide: &mut [Reg; ROUNDS + 1]) {
    let mut narrow: RoundKeys = [_mm_setzero_si128(); ROUNDS + 1];
    x86_aesni::expand_key(key, &mut narrow);
    for (w, n) in wide.iter_mut().zip(narrow.iter()) {
        *w = _mm512_broadcast_i32x4(*n);
    }
    narrow.zeroize();
}

/// FIPS 197 Cipher on a batch of registers.
#[inline]
#[target_feature(enable = "aes,avx512f,vaes")]
fn encrypt_batch(rk: &[Reg; ROUNDS + 1], lanes: &mut [__m512i; BATCH_LANES]) {
    for l in lanes.iter_mut() {
        *l = _mm512_xor_si512(*l, rk[0]);
    }
    for round_key in &rk[1..ROUNDS] {
        for l in lanes.iter_mut() {
            *l = _mm512_aesenc_epi128(*l, *round_key);
        }
    }
    for l in lanes.iter_mut() {
        *l = _mm512_aesenclast_epi128(*l, rk[ROUNDS]);
    }
}

/// The counter blocks `first..first + 32` of a pool (`first + 32 <= 256`): the
/// big-endian counter has only its last byte set, the top byte of each
/// block's high 64 bits.
#[inline]
#[target_feature(enable = "aes,avx512f,vaes")]
fn pool_counters(first: usize) -> [__m512i; BATCH_LANES] {
    let mut lanes = [_mm512_setzero_si512(); BATCH_LANES];
    for (i, l) in lanes.iter_mut().enumerate() {
        let j = (first + LANE_BLOCKS * i) as i64;
        *l = _mm512_set_epi64(
            (j + 3) << 56,
            0,
            (j + 2) << 56,
            0,
            (j + 1) << 56,
            0,
            j << 56,
            0,
        );
    }
    lanes
}

/// A pool's first batch: the low half of its first register is the next key,
/// the rest is the head of the pool's output.
#[inline]
#[target_feature(enable = "aes,avx512f,vaes")]
fn store_head(key: &mut [u8; 32], head: &mut [u8; HEAD_OUTPUT_BYTES], lanes: &[Reg; BATCH_LANES]) {
    let (first, rest) = head
        .split_first_chunk_mut::<{ LANE_BYTES / 2 }>()
        .expect("32 bytes");
    store_half(key, _mm512_castsi512_si256(lanes[0]));
    store_half(first, _mm512_extracti64x4_epi64::<1>(lanes[0]));
    let (head_lanes, _) = rest.as_chunks_mut::<LANE_BYTES>();
    for (dst, l) in head_lanes.iter_mut().zip(&lanes[1..]) {
        store(dst, *l);
    }
}

pool_kernel!(
    features = "aes,avx512f,vaes",
    zero = _mm512_setzero_si512(),
    expand = whole
);
