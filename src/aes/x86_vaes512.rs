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

/// Round keys broadcast to the four quarters of a register.
type WideRoundKeys = [__m512i; ROUNDS + 1];

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

/// Expands `key` and broadcasts each round key to both halves.
#[inline]
#[target_feature(enable = "aes,avx512f,vaes")]
fn expand_key(key: &[u8; 32], narrow: &mut RoundKeys, wide: &mut WideRoundKeys) {
    x86_aesni::expand_key(key, narrow);
    for (w, n) in wide.iter_mut().zip(narrow.iter()) {
        *w = _mm512_broadcast_i32x4(*n);
    }
}

/// FIPS 197 Cipher on a batch of registers.
#[inline]
#[target_feature(enable = "aes,avx512f,vaes")]
fn encrypt_batch(rk: &WideRoundKeys, lanes: &mut [__m512i; BATCH_LANES]) {
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

/// Several consecutive refills of `AesCtrPoolRng` (see `aes::fill_pools`).
///
/// Each pool's first batch (blocks 0..32) is encrypted first; blocks 0 and 1
/// are the next key, which is expanded before the other 7 batches,
/// so the expansion overlaps them instead of delaying the next pool.
///
/// # Security
///
/// Constant time; the round keys and the registers this function keeps on
/// the stack are zeroized.
#[target_feature(enable = "aes,avx512f,vaes")]
pub(crate) fn fill_pools(key: &mut [u8; 32], out: &mut [[u8; POOL_OUTPUT_BYTES]]) {
    let mut narrow: RoundKeys = [_mm_setzero_si128(); ROUNDS + 1];
    let mut rk: WideRoundKeys = [_mm512_setzero_si512(); ROUNDS + 1];
    let mut next: WideRoundKeys = [_mm512_setzero_si512(); ROUNDS + 1];
    let mut lanes = [_mm512_setzero_si512(); BATCH_LANES];
    expand_key(key, &mut narrow, &mut rk);
    // The last pool's next key is expanded by the next call, not here.
    let last = out.len().saturating_sub(1);
    for (i, pool) in out.iter_mut().enumerate() {
        let (head, body) = pool.split_at_mut(HEAD_OUTPUT_BYTES);
        lanes = pool_counters(0);
        encrypt_batch(&rk, &mut lanes);
        let (first, rest) = head.split_at_mut(LANE_BYTES / 2);
        store_half(key, _mm512_castsi512_si256(lanes[0]));
        store_half(
            first.try_into().expect("32 bytes"),
            _mm512_extracti64x4_epi64::<1>(lanes[0]),
        );
        let (head_lanes, _) = rest.as_chunks_mut::<LANE_BYTES>();
        for (dst, l) in head_lanes.iter_mut().zip(&lanes[1..]) {
            store(dst, *l);
        }
        if i != last {
            expand_key(key, &mut narrow, &mut next);
        }
        let (batches, _) = body.as_chunks_mut::<{ BATCH_BLOCKS * BLOCK_BYTES }>();
        for (i, batch) in batches.iter_mut().enumerate() {
            lanes = pool_counters(BATCH_BLOCKS * (i + 1));
            encrypt_batch(&rk, &mut lanes);
            let (dst_lanes, _) = batch.as_chunks_mut::<LANE_BYTES>();
            for (dst, l) in dst_lanes.iter_mut().zip(&lanes) {
                store(dst, *l);
            }
        }
        rk = next;
    }
    narrow.zeroize();
    rk.zeroize();
    next.zeroize();
    lanes.zeroize();
}

/// Writes the AES-256-CTR keystream starting at `counter` into `out`:
/// `out[i] = AES_K(counter + i)`, the 128-bit counter block big-endian and
/// wrapping modulo 2^128.
///
/// # Security
///
/// Constant time in the key; the counter and the length are public.
#[target_feature(enable = "aes,avx512f,vaes")]
pub(crate) fn ctr_keystream(key: &[u8; 32], counter: u128, out: &mut [[u8; BLOCK_BYTES]]) {
    let mut narrow: RoundKeys = [_mm_setzero_si128(); ROUNDS + 1];
    let mut rk: WideRoundKeys = [_mm512_setzero_si512(); ROUNDS + 1];
    expand_key(key, &mut narrow, &mut rk);
    let mut next = counter;
    for block in out.iter_mut() {
        *block = next.to_be_bytes();
        next = next.wrapping_add(1);
    }
    let (batches, tail) = out.as_chunks_mut::<BATCH_BLOCKS>();
    let mut lanes = [_mm512_setzero_si512(); BATCH_LANES];
    for batch in batches {
        encrypt_in_place(&rk, &mut lanes, batch);
    }
    if !tail.is_empty() {
        let mut padded = [[0u8; BLOCK_BYTES]; BATCH_BLOCKS];
        padded[..tail.len()].copy_from_slice(tail);
        encrypt_in_place(&rk, &mut lanes, &mut padded);
        tail.copy_from_slice(&padded[..tail.len()]);
        padded.zeroize();
    }
    narrow.zeroize();
    rk.zeroize();
    lanes.zeroize();
}

/// Encrypts 32 blocks in memory, through `lanes`.
#[inline]
#[target_feature(enable = "aes,avx512f,vaes")]
fn encrypt_in_place(
    rk: &WideRoundKeys,
    lanes: &mut [__m512i; BATCH_LANES],
    data: &mut [[u8; BLOCK_BYTES]; BATCH_BLOCKS],
) {
    let (pairs, _) = data.as_flattened_mut().as_chunks_mut::<LANE_BYTES>();
    for (l, src) in lanes.iter_mut().zip(pairs.iter()) {
        *l = load(src);
    }
    encrypt_batch(rk, lanes);
    for (dst, l) in pairs.iter_mut().zip(lanes.iter()) {
        store(dst, *l);
    }
}
