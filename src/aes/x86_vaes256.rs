//! AES-256 with VAES on 256-bit registers (AVX2 + VAES): two blocks per
//! register, eight registers (sixteen blocks) in flight.
//!
//! VAESENC on a YMM register is AESENC on each 128-bit half, with each half's
//! own round key; the round keys are therefore broadcast to both halves once
//! per key. The key schedule is AES-NI's ([`super::x86_aesni::round_key_pair`]).

use core::arch::x86_64::{
    __m256i, _mm256_aesenc_epi128, _mm256_aesenclast_epi128, _mm256_broadcastsi128_si256,
    _mm256_castsi256_si128, _mm256_loadu_si256, _mm256_permute2x128_si256, _mm256_set_epi64x,
    _mm256_setzero_si256, _mm256_storeu_si256, _mm256_xor_si256,
};

use super::x86_aesni::{self, EXPAND_STEPS};
use super::{BLOCK_BYTES, NEXT_KEY_BYTES, POOL_OUTPUT_BYTES, ROUNDS};

/// Blocks in one register.
const LANE_BLOCKS: usize = 2;

/// Bytes in one register.
const LANE_BYTES: usize = LANE_BLOCKS * BLOCK_BYTES;

/// Registers encrypted together: enough to cover VAESENC's latency.
const BATCH_LANES: usize = 8;

/// Blocks encrypted together.
const BATCH_BLOCKS: usize = BATCH_LANES * LANE_BLOCKS;

/// Output bytes of a pool's first batch: its blocks after the next key.
const HEAD_OUTPUT_BYTES: usize = BATCH_BLOCKS * BLOCK_BYTES - NEXT_KEY_BYTES;

// The first register of a pool is exactly the next key.
const _: () = assert!(NEXT_KEY_BYTES == LANE_BYTES);
const _: () =
    assert!((POOL_OUTPUT_BYTES - HEAD_OUTPUT_BYTES).is_multiple_of(BATCH_BLOCKS * BLOCK_BYTES));

/// One register: two blocks.
type Reg = __m256i;

/// Loads two blocks (bytes in memory order).
#[inline]
#[target_feature(enable = "avx")]
fn load(src: &[u8; LANE_BYTES]) -> __m256i {
    // SAFETY: `src` is 32 readable bytes, exactly what is read.
    // SAFETY: `loadu` has no alignment requirement.
    // SAFETY: AVX, the instruction's feature, is enabled on this function.
    unsafe { _mm256_loadu_si256(src.as_ptr().cast()) }
}

/// Stores two blocks (bytes in memory order).
#[inline]
#[target_feature(enable = "avx")]
fn store(dst: &mut [u8; LANE_BYTES], value: __m256i) {
    // SAFETY: `dst` is 32 writable bytes, exactly what is written.
    // SAFETY: `storeu` has no alignment requirement.
    // SAFETY: AVX, the instruction's feature, is enabled on this function.
    unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), value) }
}

/// One step of the key expansion ([`x86_aesni::EXPAND_STEPS`]), each new round
/// key broadcast to both halves; a step reads the low halves of the two round
/// keys before its own.
#[inline]
#[target_feature(enable = "aes,avx2,vaes")]
fn expand_key_step(key: &[u8; 32], wide: &mut [Reg; ROUNDS + 1], step: usize) {
    if step == 0 {
        let k = load(key);
        wide[0] = _mm256_permute2x128_si256::<0x00>(k, k);
        wide[1] = _mm256_permute2x128_si256::<0x11>(k, k);
    } else {
        let r = 2 * step;
        let [even, odd] = x86_aesni::round_key_pair(
            _mm256_castsi256_si128(wide[r - 2]),
            _mm256_castsi256_si128(wide[r - 1]),
            step,
        );
        wide[r] = _mm256_broadcastsi128_si256(even);
        if r < ROUNDS {
            wide[r + 1] = _mm256_broadcastsi128_si256(odd);
        }
    }
}

/// Expands `key` (all of [`expand_key_step`]'s steps).
#[inline]
#[target_feature(enable = "aes,avx2,vaes")]
fn expand_key(key: &[u8; 32], wide: &mut [Reg; ROUNDS + 1]) {
    for step in 0..EXPAND_STEPS {
        expand_key_step(key, wide, step);
    }
}

/// FIPS 197 Cipher on a batch of registers.
#[inline]
#[target_feature(enable = "aes,avx2,vaes")]
fn encrypt_batch(rk: &[Reg; ROUNDS + 1], lanes: &mut [__m256i; BATCH_LANES]) {
    for l in lanes.iter_mut() {
        *l = _mm256_xor_si256(*l, rk[0]);
    }
    for round_key in &rk[1..ROUNDS] {
        for l in lanes.iter_mut() {
            *l = _mm256_aesenc_epi128(*l, *round_key);
        }
        round_barrier(lanes);
    }
    for l in lanes.iter_mut() {
        *l = _mm256_aesenclast_epi128(*l, rk[ROUNDS]);
    }
}

/// An empty `asm!` that takes and returns every register of the batch: the
/// next round's instructions depend on all of this round's, so the compiler
/// cannot schedule the batch register by register (a chain of 14 dependent
/// VAESENCs each, which the out-of-order window cannot overlap enough).
#[inline]
#[target_feature(enable = "avx")]
fn round_barrier(lanes: &mut [__m256i; BATCH_LANES]) {
    const _: () = assert!(BATCH_LANES == 8, "the template names every register");
    // Miri interprets no `asm!`; the barrier changes no value, only the
    // schedule, so Miri runs the same computation without it.
    #[cfg(miri)]
    let _ = lanes;
    // SAFETY: the template is empty: it reads and writes nothing but the
    // registers it is given, which it leaves unchanged.
    #[cfg(not(miri))]
    unsafe {
        core::arch::asm!(
            "/* {0} {1} {2} {3} {4} {5} {6} {7} */",
            inout(ymm_reg) lanes[0],
            inout(ymm_reg) lanes[1],
            inout(ymm_reg) lanes[2],
            inout(ymm_reg) lanes[3],
            inout(ymm_reg) lanes[4],
            inout(ymm_reg) lanes[5],
            inout(ymm_reg) lanes[6],
            inout(ymm_reg) lanes[7],
            options(pure, nomem, nostack, preserves_flags),
        );
    }
}

/// The counter blocks `first..first + 16` of a pool (`first` a multiple of
/// 16, `first + 16 <= 256`): the big-endian counter has only its last byte
/// set, the top byte of each block's high 64 bits.
///
/// Block `first + k` (`k < 16`) is `first | k`, so each register is the
/// batch's base `first` in both blocks XORed with a constant (`2i` and `2i + 1`
/// in register `i`): no per-block inserts or shuffles, which would compete
/// with VAESENC for the vector pipes. The encryption's XOR with round key 0
/// then reassociates into one XOR of the base per batch and one XOR with a
/// constant per register.
#[inline]
#[target_feature(enable = "aes,avx2,vaes")]
fn pool_counters(first: usize) -> [__m256i; BATCH_LANES] {
    debug_assert!(first.is_multiple_of(BATCH_BLOCKS) && first + BATCH_BLOCKS <= 256);
    let top = (first as i64) << 56;
    #[cfg_attr(miri, allow(unused_mut))]
    let mut base = _mm256_set_epi64x(top, 0, top, 0);
    // Hides the base's bits from the compiler: knowing them, it turns the XORs
    // below into ORs (the bits are disjoint), which it then cannot reassociate
    // with round key 0's XOR, leaving two operations per register.
    // SAFETY: the template is empty: it reads and writes nothing but the
    // register it is given, which it leaves unchanged. (Not under Miri, which
    // interprets no `asm!`: see `round_barrier`.)
    #[cfg(not(miri))]
    unsafe {
        core::arch::asm!(
            "/* {0} */",
            inout(ymm_reg) base,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    let mut lanes = [_mm256_setzero_si256(); BATCH_LANES];
    for (i, l) in lanes.iter_mut().enumerate() {
        let k = (LANE_BLOCKS * i) as i64;
        *l = _mm256_xor_si256(base, _mm256_set_epi64x((k + 1) << 56, 0, k << 56, 0));
    }
    lanes
}

/// A pool's first batch: its first register is the next key, the rest is the
/// head of the pool's output.
#[inline]
#[target_feature(enable = "aes,avx2,vaes")]
fn store_head(key: &mut [u8; 32], head: &mut [u8; HEAD_OUTPUT_BYTES], lanes: &[Reg; BATCH_LANES]) {
    store(key, lanes[0]);
    let (head_lanes, _) = head.as_chunks_mut::<LANE_BYTES>();
    for (dst, l) in head_lanes.iter_mut().zip(&lanes[1..]) {
        store(dst, *l);
    }
}

pool_kernel!(features = "aes,avx2,vaes", zero = _mm256_setzero_si256());
