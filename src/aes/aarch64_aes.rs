//! AES-256 with the ARMv8 Cryptography Extension (AESE/AESMC), eight blocks
//! in flight.
//!
//! AESE is AddRoundKey, SubBytes and ShiftRows (in that order) and AESMC is
//! MixColumns, so a FIPS 197 round `r` (SubBytes, ShiftRows, MixColumns,
//! AddRoundKey `r`) is spread over two instructions: the cipher is
//! `AESMC(AESE(s, rk[r]))` for `r` in 0..13, then `AESE(s, rk[13]) ^ rk[14]`.
//! Cores fuse an AESE with the AESMC that follows it; eight independent blocks
//! cover the latency.
//!
//! ARMv8 has no key-generation instruction. SubWord comes from AESE with a
//! zero round key: when all four columns of the state are the same word,
//! ShiftRows is the identity, so `AESE(broadcast(w), 0)` is
//! `broadcast(SubWord(w))`. Constant time, like the rest.

use core::arch::aarch64::{
    uint8x16_t, vaeseq_u8, vaesmcq_u8, vdupq_n_u8, vdupq_n_u32, veorq_u8, vgetq_lane_u32, vld1q_u8,
    vreinterpretq_u8_u32, vreinterpretq_u32_u8, vsetq_lane_u8, vst1q_u8,
};

use zeroize::Zeroize;

use super::{BLOCK_BYTES, NEXT_KEY_BYTES, POOL_OUTPUT_BYTES, ROUNDS};

/// Blocks encrypted together: enough to cover AESE/AESMC's latency.
const BATCH_BLOCKS: usize = 8;

/// One register: one block.
type Reg = uint8x16_t;

/// Bytes in one register.
const LANE_BYTES: usize = BLOCK_BYTES;

/// Registers encrypted together.
const BATCH_LANES: usize = BATCH_BLOCKS;

/// Output bytes of a pool's first batch: its blocks after the next key.
const HEAD_OUTPUT_BYTES: usize = BATCH_BLOCKS * BLOCK_BYTES - NEXT_KEY_BYTES;

const _: () =
    assert!((POOL_OUTPUT_BYTES - HEAD_OUTPUT_BYTES).is_multiple_of(BATCH_BLOCKS * BLOCK_BYTES));

/// AES-256 key length in 32-bit words (FIPS 197 `Nk`).
const KEY_WORDS: usize = 8;

/// Words of the expanded key (FIPS 197 `Nb * (Nr + 1)`).
const SCHEDULE_WORDS: usize = 4 * (ROUNDS + 1);

/// The expanded key: round key `r` as a register, bytes in FIPS 197 order.
type RoundKeys = [uint8x16_t; ROUNDS + 1];

/// Loads one block (bytes in memory order).
#[inline(always)]
fn load(block: &[u8; BLOCK_BYTES]) -> uint8x16_t {
    // SAFETY: `block` is 16 readable bytes, exactly what is read.
    // SAFETY: `vld1q_u8` needs only byte alignment.
    // SAFETY: NEON (the instruction's only feature) is part of the aarch64 baseline.
    unsafe { vld1q_u8(block.as_ptr()) }
}

/// Stores one block (bytes in memory order).
#[inline(always)]
fn store(block: &mut [u8; BLOCK_BYTES], value: uint8x16_t) {
    // SAFETY: `block` is 16 writable bytes, exactly what is written.
    // SAFETY: `vst1q_u8` needs only byte alignment.
    // SAFETY: NEON (the instruction's only feature) is part of the aarch64 baseline.
    unsafe { vst1q_u8(block.as_mut_ptr(), value) }
}

/// SubWord (FIPS 197 §5.2) of a word held little-endian (its first byte in
/// the low bits): AESE with a zero key on the word broadcast to all columns.
#[inline]
#[target_feature(enable = "aes")]
fn sub_word(word: u32) -> u32 {
    let state = vreinterpretq_u8_u32(vdupq_n_u32(word));
    let substituted = vaeseq_u8(state, vdupq_n_u8(0));
    vgetq_lane_u32::<0>(vreinterpretq_u32_u8(substituted))
}

/// AES-256 KeyExpansion (FIPS 197 §5.2) into `rk`.
///
/// Words are held little-endian, so RotWord (`[a0, a1, a2, a3]` to
/// `[a1, a2, a3, a0]`) is a right rotation by 8 and Rcon's only byte is the
/// low one.
///
/// # Security
///
/// Constant time: branches only on the public index; the word schedule is
/// zeroized.
#[inline]
#[target_feature(enable = "aes")]
fn expand_key(key: &[u8; 32], rk: &mut RoundKeys) {
    let mut w = [0u32; SCHEDULE_WORDS];
    let (key_words, _) = key.as_chunks::<4>();
    for (w, bytes) in w.iter_mut().zip(key_words) {
        *w = u32::from_le_bytes(*bytes);
    }
    // AES-256 uses Rcon x^0..x^6 only: doubling needs no reduction.
    let mut rcon = 1u32;
    for i in KEY_WORDS..SCHEDULE_WORDS {
        let mut temp = w[i - 1];
        if i % KEY_WORDS == 0 {
            temp = sub_word(temp.rotate_right(8)) ^ rcon;
            rcon <<= 1;
        } else if i % KEY_WORDS == 4 {
            temp = sub_word(temp);
        }
        w[i] = w[i - KEY_WORDS] ^ temp;
    }
    let mut bytes = [0u8; BLOCK_BYTES];
    for (round_key, words) in rk.iter_mut().zip(w.chunks_exact(4)) {
        for (dst, word) in bytes.chunks_exact_mut(4).zip(words) {
            dst.copy_from_slice(&word.to_le_bytes());
        }
        *round_key = load(&bytes);
    }
    w.zeroize();
    bytes.zeroize();
}

/// FIPS 197 Cipher on a batch of blocks, in registers.
#[inline]
#[target_feature(enable = "aes")]
fn encrypt_batch(rk: &RoundKeys, blocks: &mut [uint8x16_t; BATCH_BLOCKS]) {
    for round_key in &rk[..ROUNDS - 1] {
        for b in blocks.iter_mut() {
            *b = vaesmcq_u8(vaeseq_u8(*b, *round_key));
        }
    }
    for b in blocks.iter_mut() {
        *b = veorq_u8(vaeseq_u8(*b, rk[ROUNDS - 1]), rk[ROUNDS]);
    }
}

/// The counter blocks `first..first + 8` of a pool (`first + 8 <= 256`): the
/// big-endian counter has only its last byte set.
#[inline]
#[target_feature(enable = "aes")]
fn pool_counters(first: usize) -> [uint8x16_t; BATCH_BLOCKS] {
    let mut blocks = [vdupq_n_u8(0); BATCH_BLOCKS];
    for (i, b) in blocks.iter_mut().enumerate() {
        *b = vsetq_lane_u8::<15>((first + i) as u8, vdupq_n_u8(0));
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

pool_kernel!(features = "aes", zero = vdupq_n_u8(0), expand = whole);
