//! AES-256 with the ARMv8 Cryptography Extension (AESE/AESMC), eight blocks
//! in flight.
//!
//! AESE is AddRoundKey, SubBytes and ShiftRows (in that order) and AESMC is
//! MixColumns, so a FIPS 197 round `r` (SubBytes, ShiftRows, MixColumns,
//! AddRoundKey `r`) is spread over two instructions: the cipher is
//! `AESMC(AESE(s, rk[r]))` for `r` in 0..13, then `AESE(s, rk[13]) ^ rk[14]`.
//! Cores fuse an AESE with the AESMC that follows it on the same register, so
//! each AESE is written with its AESMC right after it; eight independent
//! blocks cover the latency.
//!
//! ARMv8 has no key-generation instruction. SubWord comes from AESE with a
//! zero round key: when all four columns of the state are the same word,
//! ShiftRows is the identity, so `AESE(broadcast(w), 0)` is
//! `broadcast(SubWord(w))`. The whole schedule stays in vector registers.
//!
//! # The pool's first round, from a table
//!
//! On the cores this backend targets, the AES instructions are the bottleneck
//! (in LLVM's scheduling models, one a cycle on Cortex-A72/A76 and Neoverse
//! N1, two on N2, four on V1/V2), so the pool kernel saves some. A pool's counter blocks are
//! 0 to 255: only their last byte (byte 15, row 3 of column 3) varies. After
//! the first AESE, that byte is `S(k ^ n)` (`k` the last byte of round key 0,
//! `n` the counter) and ShiftRows has moved it to row 3 of column 0; everything
//! else is the same for the whole pool. MixColumns is linear and maps a column
//! `[0, 0, 0, s]` to `[s, s, 3s, 2s]`, so the state after the first round is
//! `R(n) = R(0) ^ D(0) ^ D(n)`, where `D(n)` is the word
//! `W(n) = [s, s, 3s, 2s]` in column 0 and zero elsewhere. The second AESE
//! adds round key 1 first, so `AESE(R(n), rk[1]) = AESE(D(n), R(0) ^ D(0) ^
//! rk[1])`: each block starts from `D(n)`, a 32-bit load from a per-pool
//! table of the 256 words `W(n)`, instead of two AES instructions. The table
//! itself costs one AESE and one AESMC per four words (a state whose row 3
//! holds four `k ^ n` and whose other rows hold `0x52`, the byte whose
//! S-box value is zero, gives four words `W(n)` in its four columns). Its
//! indices are the public counters; its values are secret and zeroized.
//! Constant time, like the rest.

use core::arch::aarch64::{
    uint8x16_t, uint32x4_t, vaeseq_u8, vaesmcq_u8, vandq_u8, vdupq_laneq_u8, vdupq_laneq_u32,
    vdupq_n_u8, vdupq_n_u32, veorq_u8, vextq_u8, vld1q_lane_u32, vld1q_u8, vqtbl1q_u8,
    vreinterpretq_u8_u32, vreinterpretq_u32_u8, vst1q_u8,
};

use core::mem::MaybeUninit;

use zeroize::Zeroize;

use super::{BLOCK_BYTES, NEXT_KEY_BYTES, POOL_OUTPUT_BYTES, ROUNDS};

/// Blocks encrypted together: enough to cover AESE/AESMC's latency.
const BATCH_BLOCKS: usize = 8;

/// Bytes of one batch.
const BATCH_BYTES: usize = BATCH_BLOCKS * BLOCK_BYTES;

/// Output bytes of a pool's first batch: its blocks after the next key.
const HEAD_OUTPUT_BYTES: usize = BATCH_BYTES - NEXT_KEY_BYTES;

/// Counter blocks in a pool (the counter's last byte takes every value once).
const POOL_BLOCKS: usize = 256;

/// Registers of the first pool's first-round table written after each step
/// of its key's expansion.
const TABLE_WORDS_PER_STEP: usize = POOL_BLOCKS / 4 / EXPAND_STEPS;

const _: () = assert!((POOL_OUTPUT_BYTES - HEAD_OUTPUT_BYTES).is_multiple_of(BATCH_BYTES));
const _: () = assert!(POOL_OUTPUT_BYTES + NEXT_KEY_BYTES == POOL_BLOCKS * BLOCK_BYTES);

/// The expanded key: round key `r` as a register, bytes in FIPS 197 order.
type RoundKeys = [uint8x16_t; ROUNDS + 1];

/// A pool's first-round words `W(n)`, `n` in 0..256 (see the module docs):
/// `W(n)` is lane `n % 4` of register `n / 4`. Registers, not words, so that
/// zeroizing the table takes 64 stores, not 256.
type FirstRound = [uint32x4_t; POOL_BLOCKS / 4];

/// The first AESE's inputs for the table of `W(n)`, four counters per
/// register: rows 0 to 2 (bytes `4c..4c + 3`) hold `0x52`, whose S-box value is
/// zero, and row 3 of column `c` holds the counter `4j + (c + 1) % 4`, which
/// ShiftRows moves to column `(c + 1) % 4`: column `c` of the result is
/// `W(4j + c)`.
static FIRST_ROUND_INPUTS: [[u8; BLOCK_BYTES]; POOL_BLOCKS / 4] = {
    let mut inputs = [[0x52u8; BLOCK_BYTES]; POOL_BLOCKS / 4];
    let mut j = 0;
    while j < POOL_BLOCKS / 4 {
        let mut c = 0;
        while c < 4 {
            // ShiftRows rotates row 3 by three columns: the byte in column
            // `c` lands in column `c + 1 (mod 4)`.
            inputs[j][4 * c + 3] = (4 * j + (c + 1) % 4) as u8;
            c += 1;
        }
        j += 1;
    }
    inputs
};

/// `RotWord` of word 3, in every column: the `vqtbl1q_u8` indices.
const ROT_WORD_3: [u8; BLOCK_BYTES] = [
    13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12,
];

/// Row 3 of every column.
const ROW_3: [u8; BLOCK_BYTES] = [0, 0, 0, 0xff, 0, 0, 0, 0xff, 0, 0, 0, 0xff, 0, 0, 0, 0xff];

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

/// `x` with each word replaced by the XOR of it and the words before it:
/// `[a, b, c, d]` to `[a, a^b, a^b^c, a^b^c^d]`.
#[inline]
#[target_feature(enable = "aes")]
fn prefix_xor(x: uint8x16_t) -> uint8x16_t {
    let zero = vdupq_n_u8(0);
    let x = veorq_u8(x, vextq_u8::<12>(zero, x));
    veorq_u8(x, vextq_u8::<8>(zero, x))
}

/// AES-256 KeyExpansion (FIPS 197 §5.2) of the key `[k0, k1]` into `rk`, in
/// registers: round key `2i` is `prefix_xor(rk[2i - 2])` XOR the broadcast of
/// `SubWord(RotWord(w)) ^ Rcon[i]` (`w` the last word of `rk[2i - 1]`), and
/// round key `2i + 1` is `prefix_xor(rk[2i - 1])` XOR the broadcast of
/// `SubWord(w)` (`w` the last word of `rk[2i]`).
///
/// The expansion is a chain of dependent instructions, short but slow; it
/// calls `between(i)` after its step `i` (of [`EXPAND_STEPS`]), so that the
/// caller can put independent work there for the core to overlap with the
/// chain (an out-of-order window holds only so many instructions).
///
/// # Security
///
/// Constant time: no branch, no table lookup.
#[inline]
#[target_feature(enable = "aes")]
fn expand_key_with(
    k0: uint8x16_t,
    k1: uint8x16_t,
    rk: &mut RoundKeys,
    mut between: impl FnMut(usize),
) {
    let zero = vdupq_n_u8(0);
    let rot_word_3 = load(&ROT_WORD_3);
    let even_key = |even: uint8x16_t, odd: uint8x16_t, rcon: u32| {
        let sub = vaeseq_u8(vqtbl1q_u8(odd, rot_word_3), zero);
        let rcon = vreinterpretq_u8_u32(vdupq_n_u32(rcon));
        veorq_u8(veorq_u8(prefix_xor(even), rcon), sub)
    };
    let odd_key = |odd: uint8x16_t, even: uint8x16_t| {
        let word_3 = vreinterpretq_u8_u32(vdupq_laneq_u32::<3>(vreinterpretq_u32_u8(even)));
        veorq_u8(prefix_xor(odd), vaeseq_u8(word_3, zero))
    };
    // Written out rather than a loop over Rcon, so that the compiler sees
    // every round key stored at a constant index.
    rk[0] = k0;
    rk[1] = k1;
    rk[2] = even_key(rk[0], rk[1], 0x01);
    rk[3] = odd_key(rk[1], rk[2]);
    between(0);
    rk[4] = even_key(rk[2], rk[3], 0x02);
    rk[5] = odd_key(rk[3], rk[4]);
    between(1);
    rk[6] = even_key(rk[4], rk[5], 0x04);
    rk[7] = odd_key(rk[5], rk[6]);
    between(2);
    rk[8] = even_key(rk[6], rk[7], 0x08);
    rk[9] = odd_key(rk[7], rk[8]);
    between(3);
    rk[10] = even_key(rk[8], rk[9], 0x10);
    rk[11] = odd_key(rk[9], rk[10]);
    between(4);
    rk[12] = even_key(rk[10], rk[11], 0x20);
    rk[13] = odd_key(rk[11], rk[12]);
    between(5);
    rk[14] = even_key(rk[12], rk[13], 0x40);
    between(6);
}

/// Steps of [`expand_key_with`]: one per Rcon (AES-256 uses `x^0..x^6`).
const EXPAND_STEPS: usize = 7;

/// [`expand_key_with`] with nothing between the steps.
#[inline]
#[target_feature(enable = "aes")]
fn expand_key(k0: uint8x16_t, k1: uint8x16_t, rk: &mut RoundKeys) {
    expand_key_with(k0, k1, rk, |_| {});
}

/// AES-256 KeyExpansion of a key in memory.
#[inline]
#[target_feature(enable = "aes")]
fn expand_key_bytes(key: &[u8; 32], rk: &mut RoundKeys) {
    let (halves, _) = key.as_chunks::<BLOCK_BYTES>();
    expand_key(load(&halves[0]), load(&halves[1]), rk);
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

/// The counter's byte of round key 0 (`k` in the module docs), in row 3 of
/// every column, zero elsewhere: the key of the table's AESE.
#[inline]
#[target_feature(enable = "aes")]
fn counter_byte_key(rk0: uint8x16_t) -> uint8x16_t {
    vandq_u8(vdupq_laneq_u8::<15>(rk0), load(&ROW_3))
}

/// The pool's first-round words `W(4j..4j + 4)`, given
/// `k = counter_byte_key(rk[0])` (see the module docs).
///
/// # Security
///
/// Constant time: no branch; `j` is public.
#[inline]
#[target_feature(enable = "aes")]
fn first_round_words(k: uint8x16_t, j: usize) -> uint32x4_t {
    vreinterpretq_u32_u8(vaesmcq_u8(vaeseq_u8(load(&FIRST_ROUND_INPUTS[j]), k)))
}

/// The key that the second AESE takes in place of `rk[1]` when the block is
/// `D(n)`: `R(0) ^ D(0) ^ rk[1]` (see the module docs).
#[inline]
#[target_feature(enable = "aes")]
fn second_round_key(rk: &RoundKeys, table: &FirstRound) -> uint8x16_t {
    let first = vaesmcq_u8(vaeseq_u8(vdupq_n_u8(0), rk[0]));
    veorq_u8(veorq_u8(first, first_round_state(table, 0)), rk[1])
}

/// `D(n)`: the word `W(n)` in column 0, zero elsewhere.
#[inline]
#[target_feature(enable = "aes")]
fn first_round_state(table: &FirstRound, n: usize) -> uint8x16_t {
    let words: *const u32 = (&raw const table[n / 4]).cast();
    // SAFETY: `words` points to the four lanes of a `uint32x4_t`, which are
    // laid out in memory as `[u32; 4]`; `n % 4 < 4`, so the pointer after
    // `add` is one readable, aligned `u32` of that register, exactly what is
    // read.
    // SAFETY: NEON is part of the aarch64 baseline.
    let lanes: uint32x4_t = unsafe { vld1q_lane_u32::<0>(words.add(n % 4), vdupq_n_u32(0)) };
    vreinterpretq_u8_u32(lanes)
}

/// The pool's blocks `first..first + 8` (`first + 8 <= 256`), from the
/// first-round table and `key1` (see [`second_round_key`]).
#[inline]
#[target_feature(enable = "aes")]
fn pool_batch(
    rk: &RoundKeys,
    table: &FirstRound,
    key1: uint8x16_t,
    first: usize,
) -> [uint8x16_t; BATCH_BLOCKS] {
    let mut blocks = [vdupq_n_u8(0); BATCH_BLOCKS];
    for (i, b) in blocks.iter_mut().enumerate() {
        *b = vaesmcq_u8(vaeseq_u8(first_round_state(table, first + i), key1));
    }
    for round_key in &rk[2..ROUNDS - 1] {
        for b in blocks.iter_mut() {
            *b = vaesmcq_u8(vaeseq_u8(*b, *round_key));
        }
    }
    for b in blocks.iter_mut() {
        *b = veorq_u8(vaeseq_u8(*b, rk[ROUNDS - 1]), rk[ROUNDS]);
    }
    blocks
}

/// Several consecutive refills of `AesCtrPoolRng` (see `aes::fill_pools`).
///
/// Each pool's first batch is encrypted first; its first two blocks are the
/// next key, expanded (in registers) right after it, so that the expansion
/// overlaps the pool's other batches. The last pool's next key is left for the
/// next call to expand.
///
/// # Security
///
/// Constant time; the round keys and the first-round table are zeroized. The
/// blocks live in registers only.
#[target_feature(enable = "aes")]
pub(crate) fn fill_pools(key: &mut [u8; 32], out: &mut [[u8; POOL_OUTPUT_BYTES]]) {
    // The current and the next pool's round keys, swapped by reference (not
    // copied) from one pool to the next.
    let mut keys_a = [vdupq_n_u8(0); ROUNDS + 1];
    let mut keys_b = [vdupq_n_u8(0); ROUNDS + 1];
    let (mut rk, mut next) = (&mut keys_a, &mut keys_b);
    // The first pool's table is written between the steps of its key's
    // expansion (it needs only round key 0, the key's first half), which it
    // overlaps. Written in place, not zeroed first: that would cost a call
    // to `memset`.
    let mut table_storage = MaybeUninit::<FirstRound>::uninit();
    let first_words: *mut uint32x4_t = table_storage.as_mut_ptr().cast();
    let (halves, _) = key.as_chunks::<BLOCK_BYTES>();
    let (k0, k1) = (load(&halves[0]), load(&halves[1]));
    let k = counter_byte_key(k0);
    let write_words = |words: core::ops::Range<usize>| {
        for j in words {
            // SAFETY: `first_words` points to the 64 registers of
            // `table_storage` (an array of them) and `j < 64` (the ranges
            // below), so `add(j)` stays inside it and is aligned; `write`
            // leaves the uninitialized value there alone.
            unsafe { first_words.add(j).write(first_round_words(k, j)) };
        }
    };
    expand_key_with(k0, k1, rk, |step| {
        write_words(TABLE_WORDS_PER_STEP * step..TABLE_WORDS_PER_STEP * (step + 1));
    });
    write_words(TABLE_WORDS_PER_STEP * EXPAND_STEPS..POOL_BLOCKS / 4);
    // SAFETY: the steps `0..EXPAND_STEPS` wrote the registers
    // `0..TABLE_WORDS_PER_STEP * EXPAND_STEPS`, and the line above the rest
    // of the array.
    let table: &mut FirstRound = unsafe { table_storage.assume_init_mut() };
    let last = out.len().saturating_sub(1);
    for (i, pool) in out.iter_mut().enumerate() {
        if i != 0 {
            let k = counter_byte_key(rk[0]);
            for (j, words) in table.iter_mut().enumerate() {
                *words = first_round_words(k, j);
            }
        }
        let key1 = second_round_key(rk, table);
        let (head, body) = pool
            .split_first_chunk_mut::<HEAD_OUTPUT_BYTES>()
            .expect("a pool is longer than its first batch");
        let blocks = pool_batch(rk, table, key1, 0);
        let (key_halves, _) = key.as_chunks_mut::<BLOCK_BYTES>();
        store(&mut key_halves[0], blocks[0]);
        store(&mut key_halves[1], blocks[1]);
        let (head_blocks, _) = head.as_chunks_mut::<BLOCK_BYTES>();
        for (dst, b) in head_blocks.iter_mut().zip(&blocks[2..]) {
            store(dst, *b);
        }
        if i != last {
            expand_key(blocks[0], blocks[1], next);
        }
        let (batches, _) = body.as_chunks_mut::<BATCH_BYTES>();
        for (j, batch) in batches.iter_mut().enumerate() {
            let blocks = pool_batch(rk, table, key1, BATCH_BLOCKS * (j + 1));
            let (dst_blocks, _) = batch.as_chunks_mut::<BLOCK_BYTES>();
            for (dst, b) in dst_blocks.iter_mut().zip(&blocks) {
                store(dst, *b);
            }
        }
        core::mem::swap(&mut rk, &mut next);
    }
    keys_a.zeroize();
    keys_b.zeroize();
    table.zeroize();
}

/// One register: one block (the names `ctr_kernel!` asks for).
type Reg = uint8x16_t;

/// Bytes in one register.
const LANE_BYTES: usize = BLOCK_BYTES;

/// Registers encrypted together.
const BATCH_LANES: usize = BATCH_BLOCKS;

ctr_kernel!(
    features = "aes",
    zero = vdupq_n_u8(0),
    expand = expand_key_bytes
);

#[cfg(test)]
mod tests {
    //! The pieces of this backend that `aes.rs`'s tests (every backend against
    //! `soft`, through `fill_pools` and `ctr_keystream`) reach only through
    //! whole streams: the key schedule against FIPS 197's word-by-word
    //! description, and the first-round table against the two instructions it
    //! replaces, for every counter of a pool.

    use super::*;

    /// Keys: FIPS 197 Appendix A.3's, and a few more from a fixed xorshift.
    fn keys() -> impl Iterator<Item = [u8; 32]> {
        let fips = [
            0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae, 0xf0, 0x85, 0x7d,
            0x77, 0x81, 0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61, 0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3,
            0x09, 0x14, 0xdf, 0xf4,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let more = core::iter::repeat_with(move || {
            let mut key = [0u8; 32];
            for b in key.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            key
        });
        core::iter::once(fips).chain(more.take(15))
    }

    fn bytes(r: uint8x16_t) -> [u8; BLOCK_BYTES] {
        let mut out = [0u8; BLOCK_BYTES];
        store(&mut out, r);
        out
    }

    /// SubWord by AESE on one word (bytes in FIPS 197 order).
    #[target_feature(enable = "aes")]
    fn sub_word(word: [u8; 4]) -> [u8; 4] {
        let mut block = [0u8; BLOCK_BYTES];
        for column in block.chunks_exact_mut(4) {
            column.copy_from_slice(&word);
        }
        let out = bytes(vaeseq_u8(load(&block), vdupq_n_u8(0)));
        [out[0], out[1], out[2], out[3]]
    }

    /// Whether this CPU has the AES extension (the tests need it).
    fn aes_available() -> bool {
        std::arch::is_aarch64_feature_detected!("aes")
    }

    /// FIPS 197 §5.2 KeyExpansion, word by word, as the standard writes it.
    #[target_feature(enable = "aes")]
    fn reference_schedule(key: &[u8; 32]) -> [[u8; 4]; 60] {
        let mut w = [[0u8; 4]; 60];
        for (i, word) in w.iter_mut().take(8).enumerate() {
            word.copy_from_slice(&key[4 * i..4 * i + 4]);
        }
        let mut rcon = 1u8;
        for i in 8..60 {
            let mut temp = w[i - 1];
            if i % 8 == 0 {
                temp = sub_word([temp[1], temp[2], temp[3], temp[0]]);
                temp[0] ^= rcon;
                rcon <<= 1;
            } else if i % 8 == 4 {
                temp = sub_word(temp);
            }
            for b in 0..4 {
                w[i][b] = w[i - 8][b] ^ temp[b];
            }
        }
        w
    }

    #[test]
    fn key_schedule_matches_fips_197() {
        if aes_available() {
            // SAFETY: `aes_available` found the extension.
            unsafe { check_key_schedule() };
        }
    }

    #[target_feature(enable = "aes")]
    fn check_key_schedule() {
        for key in keys() {
            let mut rk = [vdupq_n_u8(0); ROUNDS + 1];
            expand_key_bytes(&key, &mut rk);
            let words = reference_schedule(&key);
            for (r, round_key) in rk.iter().enumerate() {
                assert_eq!(
                    bytes(*round_key).as_chunks::<4>().0,
                    &words[4 * r..4 * r + 4],
                    "round key {r}"
                );
            }
        }
        // FIPS 197 Appendix A.3: the last four words of the schedule.
        let mut rk = [vdupq_n_u8(0); ROUNDS + 1];
        expand_key_bytes(&keys().next().expect("the FIPS key"), &mut rk);
        assert_eq!(
            bytes(rk[ROUNDS]),
            [
                0xfe, 0x48, 0x90, 0xd1, 0xe6, 0x18, 0x8d, 0x0b, 0x04, 0x6d, 0xf3, 0x44, 0x70, 0x6c,
                0x63, 0x1e
            ]
        );
    }

    /// For every counter `n` of a pool, the second AESE on `D(n)` under the
    /// replacement key equals it on the real first-round state.
    #[test]
    fn first_round_table_matches_the_first_round_for_every_counter() {
        if aes_available() {
            // SAFETY: `aes_available` found the extension.
            unsafe { check_first_round_table() };
        }
    }

    #[target_feature(enable = "aes")]
    fn check_first_round_table() {
        for key in keys() {
            let mut rk = [vdupq_n_u8(0); ROUNDS + 1];
            expand_key_bytes(&key, &mut rk);
            let k = counter_byte_key(rk[0]);
            let mut table = [vdupq_n_u32(0); POOL_BLOCKS / 4];
            for (j, words) in table.iter_mut().enumerate() {
                *words = first_round_words(k, j);
            }
            let key1 = second_round_key(&rk, &table);
            for n in 0..POOL_BLOCKS {
                let counter = (n as u128).to_be_bytes();
                let state = vaesmcq_u8(vaeseq_u8(load(&counter), rk[0]));
                let want = bytes(vaeseq_u8(state, rk[1]));
                let got = bytes(vaeseq_u8(first_round_state(&table, n), key1));
                assert_eq!(got, want, "counter {n}");
            }
        }
    }
}
