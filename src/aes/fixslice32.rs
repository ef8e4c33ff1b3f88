//! Portable, constant-time AES-256 for 32-bit cores: fixsliced over `u32`,
//! two blocks at a time.
//!
//! The same technique as [`soft`](super::soft) (Adomnicai and Peyrin,
//! "Fixslicing AES-like Ciphers", TCHES 2021), on planes that fit a 32-bit
//! register: a [`State`] is eight `u32` bit planes, plane `i` holding bit `i`
//! of the 32 bytes of two blocks. A 64-bit rotation costs four instructions on
//! ARMv7-M or RV32 and sixteen live words do not fit their register files;
//! eight `u32` planes do, nearly, and every rotation here is one barrel-shifter
//! operand. `soft.rs` stays the specification: the tests below and in
//! `aes.rs` compare this kernel with it.
//!
//! # Representation
//!
//! Inside a plane, byte `n` of block `b` (0 or 1) sits at bit position
//!
//! ```text
//! 8 * row + 2 * column + b,   where row = n % 4, column = n / 4
//! ```
//!
//! so a plane is four bytes, one per row of the state, each byte four 2-bit
//! pairs, one per column, each pair one bit from each block. Moving every row
//! up by one is `rotate_right(8)`; moving every column by one is a rotation
//! by 2 bits inside each byte.
//!
//! The rounds are fixsliced exactly as in `soft.rs` (ShiftRows never applied,
//! the state after round `r` has lag `r mod 4`, round key `r` stored with the
//! same lag, one `shift_rows(2)` after the last round): both kernels run the
//! same code, [`fixslice`](super::fixslice), on planes of their width. This
//! module holds the packing of two blocks, the key expansion straight into
//! round keys, and the pool's cached first round.
//!
//! Its SubBytes leaves out the S-box's affine constant `0x63` (the four NOT
//! gates of the circuit, on planes 0, 1, 5 and 6): MixColumns maps a state of
//! `0x63` in every byte to itself (`2 ^ 3 ^ 1 ^ 1 = 1`), so the constant left
//! out by each round's SubBytes is added with the round key that follows it
//! instead, once per key: round keys 1 to 14 are stored with those planes
//! complemented ([`SBOX_CONSTANT`]). The key schedule's SubWord adds it back.
//!
//! # The pool
//!
//! A pool is the keystream of counter blocks 0..256, so a counter block is
//! zero except for its last byte. After the first AddRoundKey only that byte
//! differs between the blocks of a pool: [`FirstSubBytes`] computes the first
//! SubBytes of all 256 blocks once per key (8 bitsliced evaluations instead
//! of 128) and a batch starts from it, with no transposition of its counters.
//! The key changes at every pool (fast key erasure), so each pool expands its
//! key once, directly into the fixsliced round keys, which stay in place for
//! the pool's 128 batches.
//!
//! # Security
//!
//! Constant time in the key: logic and fixed rotations on planes; every index
//! and branch depends on public counters and round numbers. Nothing of a key
//! outlives a call of [`fill_pools`] or [`ctr_keystream`] outside the caller's
//! `key` (the current key, overwritten in place by the next one): the round
//! keys ([`RoundKeys`]) and the first round's S-box planes
//! ([`FirstSubBytes`]) are zeroized where they live when they drop, the key
//! schedule's window and the packing buffers as soon as they are used, and
//! then [`scrub_stack`] zeroes the [`SCRUB_BYTES`] of stack below the caller's
//! frame that the kernel used, which hold whatever the compiler spilled or
//! copied there (planes of the state and of the round keys, by-value copies
//! such as [`FirstSubBytes::of_batch`]'s) and the Thumb-2 S-box's spill area
//! (`arm_thumb2.rs`, 72 bytes below the stack pointer at each call).
//! Registers are not cleared. Checked by `tests/fixslice32_stack.rs` (x86_64,
//! through `hazmat`) and by the firmware's `stack-residue` check on a
//! Cortex-M4F and a RISC-V rv32 core, both looking for every word of the
//! keys, round keys and S-box planes in the stack below the caller.
#![forbid(unsafe_code)]

use core::fmt;

use zeroize::Zeroize;

use super::fixslice::fixsliced_cipher;
use super::soft::POOL_OUTPUT_BYTES;

/// Bytes in one AES block.
const BLOCK_BYTES: usize = 16;

/// Blocks encrypted together by one bitsliced evaluation (32 bits per plane).
const BATCH_BLOCKS: usize = 2;

/// Bytes of one batch: two blocks.
const BATCH_BYTES: usize = BATCH_BLOCKS * BLOCK_BYTES;

/// Rounds of AES-256 (FIPS 197 `Nr`).
const ROUNDS: usize = 14;

/// Bytes at the start of each pool that become the next key: one batch.
const NEXT_KEY_BYTES: usize = 32;

const _: () = assert!(NEXT_KEY_BYTES == BATCH_BYTES);
const _: () = assert!(POOL_OUTPUT_BYTES.is_multiple_of(BATCH_BYTES));
// A pool's counters fit in the last byte of the counter block.
const _: () = assert!((NEXT_KEY_BYTES + POOL_OUTPUT_BYTES) / BLOCK_BYTES <= 256);

/// Two blocks as eight bit planes (see the module docs for the layout).
type State = [u32; 8];

/// The S-box's affine constant `0x63` in every byte, as planes: all ones in
/// planes 0, 1, 5 and 6. Left out of [`sbox_circuit`] and added with round
/// keys 1 to 14 (see the module docs).
const SBOX_CONSTANT: State = [!0, !0, 0, 0, 0, !0, !0, 0];

/// The S-box without its affine constant, `S(x) ^ 0x63` on every byte: the
/// rounds' SubBytes. On Thumb-2 cores, the same circuit in assembly
/// (`arm_thumb2.rs`, chosen by `aes.rs`); elsewhere
/// [`portable_sbox_circuit_without_constant`].
#[inline(always)]
fn sbox_circuit(planes: State) -> State {
    super::sbox32_without_constant(planes)
}

/// The S-box circuit of `soft.rs` without its affine constant: its NOT gates
/// are undone here, and the compiler removes both.
#[cfg_attr(
    ratchet_rng_arm_thumb2,
    allow(dead_code, reason = "replaced by the assembly on these cores")
)]
#[inline(always)]
pub(super) fn portable_sbox_circuit_without_constant(planes: State) -> State {
    zip_planes(super::soft::sbox_circuit(planes), SBOX_CONSTANT, |s, c| {
        s ^ c
    })
}

/// An AES-256 expanded key in the 32-bit fixsliced representation, each round
/// key repeated in both blocks of a batch and stored with the lag of the state
/// it is added to; round keys 1 to 14 with [`SBOX_CONSTANT`] added.
///
/// # Security
///
/// Zeroized on drop (`aes::tests::fixslice32_round_keys_are_zeroized_on_drop`).
/// Not `Clone`; `Debug` prints no key material.
pub(super) struct RoundKeys {
    planes: [State; ROUNDS + 1],
}

impl RoundKeys {
    /// All-zero round keys, to be filled by [`expand_key`].
    pub(super) const fn zeroed() -> Self {
        Self {
            planes: [[0; 8]; ROUNDS + 1],
        }
    }
}

impl Drop for RoundKeys {
    fn drop(&mut self) {
        self.planes.zeroize();
    }
}

impl fmt::Debug for RoundKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RoundKeys").finish_non_exhaustive()
    }
}

/// Several consecutive refills of `AesCtrPoolRng`: `out[p]` is pool `p`, each
/// pool under the key left by the one before (see `aes::fill_pools`); `*key`
/// ends as the key of the pool after the last. The same bytes as
/// `soft::fill_pools`.
///
/// # Security
///
/// Constant time in the key. The old key is overwritten with the next one in
/// place. The round keys and the first round's S-box planes are zeroized
/// where they live (their `Drop`), and then the whole stack the kernel used
/// below its caller's frame ([`SCRUB_BYTES`]: spilled planes, by-value copies,
/// the Thumb-2 S-box's spill area) is zeroed before this returns.
#[inline]
pub(crate) fn fill_pools(key: &mut [u8; 32], out: &mut [[u8; POOL_OUTPUT_BYTES]]) {
    pools(key, out);
    scrub_stack();
}

/// [`fill_pools`] before the stack scrub: out of line, so that its frames lie
/// where [`scrub_stack`]'s frame, called next from the same frame, overwrites
/// them.
#[inline(never)]
fn pools(key: &mut [u8; 32], out: &mut [[u8; POOL_OUTPUT_BYTES]]) {
    let mut rk = RoundKeys::zeroed();
    let mut first = FirstSubBytes::zeroed();
    let mut state: State = [0; 8];
    for pool in out {
        expand_key(key, &mut rk);
        first.compute(&rk);
        // Blocks 0 and 1, one batch, are the next key.
        state = first.of_batch(0);
        rounds_after_first_sub_bytes(&rk.planes, &mut state);
        store(&state, key);
        // Blocks 2..256 straight into the output.
        let (batches, _) = pool.as_chunks_mut::<BATCH_BYTES>();
        for (j, batch) in batches.iter_mut().enumerate() {
            state = first.of_batch(BATCH_BLOCKS * (j + 1));
            rounds_after_first_sub_bytes(&rk.planes, &mut state);
            store(&state, batch);
        }
    }
    state.zeroize();
    // `rk` and `first` are zeroized as they drop here.
}

/// The first round's SubBytes for every batch of a pool, computed once per
/// key (counter-mode caching): a counter block of the pool is zero but for
/// its last byte, so after AddRoundKey 0 the 15 other bytes of every block are
/// those of round key 0, and only byte 15 takes the 256 values
/// `rk0[15] ^ j`. Their S-box outputs take 8 bitsliced evaluations of 32
/// bytes instead of one per batch. Like every SubBytes here, without the
/// S-box constant (see the module docs).
///
/// # Security
///
/// Secret (derived from the key); zeroized on drop. A batch reads its bits at
/// an index and a shift given by its counter, which is public.
struct FirstSubBytes {
    /// SubBytes of round key 0, with the bits of byte 15 (positions 30 and
    /// 31) cleared.
    base: State,
    /// `last_byte[m]`, plane `i`, bit `p`: bit `i` of `S(rk0[15] ^ (32 * m + p))`.
    last_byte: [State; 8],
}

/// Positions of byte 15 (row 3, column 3) of both blocks in a plane.
const LAST_BYTE_BITS: u32 = 0b11 << 30;

impl FirstSubBytes {
    const fn zeroed() -> Self {
        Self {
            base: [0; 8],
            last_byte: [[0; 8]; 8],
        }
    }

    /// Computes the table for round key 0 of `rk`.
    fn compute(&mut self, rk: &RoundKeys) {
        let rk0 = rk.planes[0];
        self.base = rk0;
        sub_bytes(&mut self.base);
        self.base = map_planes(self.base, |x| x & !LAST_BYTE_BITS);
        // Bit `i` of rk0[15], all ones or all zeros (round key 0 has lag 0, so
        // byte 15 is at positions 30 and 31 of each plane).
        let key_bit = map_planes(rk0, |x| 0u32.wrapping_sub((x >> 30) & 1));
        // Plane `i` of the bytes 32 * m + p, p = 0..32: bit `i` of p for
        // `i` < 5, bit `i - 5` of m above.
        const LOW_PATTERNS: [u32; 5] = [
            0xaaaa_aaaa,
            0xcccc_cccc,
            0xf0f0_f0f0,
            0xff00_ff00,
            0xffff_0000,
        ];
        for (m, planes) in self.last_byte.iter_mut().enumerate() {
            let m = m as u32;
            let counters: State = [
                LOW_PATTERNS[0],
                LOW_PATTERNS[1],
                LOW_PATTERNS[2],
                LOW_PATTERNS[3],
                LOW_PATTERNS[4],
                0u32.wrapping_sub(m & 1),
                0u32.wrapping_sub((m >> 1) & 1),
                0u32.wrapping_sub((m >> 2) & 1),
            ];
            *planes = zip_planes(counters, key_bit, |c, k| c ^ k);
            sub_bytes(planes);
        }
    }

    /// The state after the first round's SubBytes for counter blocks `first`
    /// and `first + 1` (`first` even, below 255).
    #[inline(always)]
    fn of_batch(&self, first: usize) -> State {
        debug_assert!(first.is_multiple_of(2) && first < 255);
        let bits = &self.last_byte[first / 32];
        let shift = (first % 32) as u32;
        zip_planes(self.base, *bits, |base, bits| {
            base | (((bits >> shift) & 0b11) << 30)
        })
    }
}

impl Drop for FirstSubBytes {
    fn drop(&mut self) {
        self.base.zeroize();
        self.last_byte.zeroize();
    }
}

/// Writes the AES-256-CTR keystream under `key` starting at `counter` into
/// `out`: `out[i] = AES_K(counter + i)`, the 128-bit counter block big-endian
/// and wrapping modulo 2^128. The same bytes as `soft::ctr_keystream`.
///
/// # Security
///
/// Constant time in the key; the counter and the length are public. The round
/// keys are zeroized on drop and the stack the kernel used is zeroed before
/// this returns, as in [`fill_pools`].
#[inline]
pub(crate) fn ctr_keystream(key: &[u8; 32], counter: u128, out: &mut [[u8; BLOCK_BYTES]]) {
    keystream(key, counter, out);
    scrub_stack();
}

/// [`ctr_keystream`] before the stack scrub (see [`pools`]).
#[inline(never)]
fn keystream(key: &[u8; 32], counter: u128, out: &mut [[u8; BLOCK_BYTES]]) {
    let mut rk = RoundKeys::zeroed();
    expand_key(key, &mut rk);
    let mut next = counter;
    let mut batch = [0u8; BATCH_BYTES];
    for blocks in out.chunks_mut(BATCH_BLOCKS) {
        for block in batch.chunks_exact_mut(BLOCK_BYTES) {
            block.copy_from_slice(&next.to_be_bytes());
            next = next.wrapping_add(1);
        }
        let mut state = bitslice(&batch);
        cipher(&rk.planes, &mut state);
        store(&state, &mut batch);
        state.zeroize();
        let len = blocks.len() * BLOCK_BYTES;
        blocks.as_flattened_mut().copy_from_slice(&batch[..len]);
    }
    // A last odd block went one counter past the end: public, and unused.
    batch.zeroize();
}

/// Bytes of stack [`scrub_stack`] zeroes below the frame that calls the
/// kernel: more than the deepest the kernel's calls reach ([`pools`] or
/// [`keystream`] and everything they call, the Thumb-2 S-box's spill area
/// included), measured by painting the stack. On a Cortex-M4 (rustc 1.95) the
/// kernel writes between 1152 and 1280 bytes below its caller at opt-levels
/// "s" and 3 (a 1152-byte scrub leaves none of its secret words there but
/// misses its deepest frame; 1280 bytes cover it: the firmware's
/// `stack-residue` check, `.ci/firmware`), and a rv32imac core about as
/// much; on x86_64 (the host's `tests/fixslice32_stack.rs`), 1.5 KiB below
/// the test's frame in release.
const SCRUB_BYTES: usize = if cfg!(target_pointer_width = "64") {
    2048
} else {
    1280
};

/// Zeroes [`SCRUB_BYTES`] of stack: called right after [`pools`] (or
/// [`keystream`]) from the same frame, its own frame lies where the kernel
/// spilled planes and round-key words, and its volatile writes overwrite
/// them. In `u64`s: one store instruction (`strd`) per 8 bytes on 32-bit Arm.
#[inline(never)]
fn scrub_stack() {
    let mut scratch = [0u64; SCRUB_BYTES / 8];
    scratch.zeroize();
}

// ---------------------------------------------------------------------------
// Key expansion (FIPS 197 §5.2), straight into fixsliced round keys
// ---------------------------------------------------------------------------

/// Expands `key` into `rk`: FIPS 197 KeyExpansion for AES-256 over a window of
/// the last eight schedule words, each round key (four words) converted to
/// planes as soon as it is known.
///
/// Branches only on the public round number; the window is zeroized.
pub(super) fn expand_key(key: &[u8; 32], rk: &mut RoundKeys) {
    // `window[k]` is schedule word `w[i - 8 + k]` (big-endian, as FIPS 197).
    let mut window = [0u32; 8];
    let (key_words, _) = key.as_chunks::<4>();
    for (w, bytes) in window.iter_mut().zip(key_words) {
        *w = u32::from_be_bytes(*bytes);
    }
    let (first, second) = window.split_at(4);
    rk.planes[0] = round_key_planes(first, 0);
    rk.planes[1] = round_key_planes(second, 1);
    add_round_key(&mut rk.planes[1], &SBOX_CONSTANT);
    // Rcon[i / Nk] = [x^(i/Nk - 1), 0, 0, 0]; AES-256 uses x^0..x^6 only, so
    // doubling never needs the reduction.
    let mut rcon: u32 = 0x0100_0000;
    for round in 2..=ROUNDS {
        // The first word of round key `round` is w[4 * round]: 4 * round is a
        // multiple of Nk = 8 for even rounds (RotWord, SubWord, Rcon), and
        // 4 mod 8 for odd rounds (SubWord only).
        let mut temp = if round % 2 == 0 {
            let t = sub_word(window[7].rotate_left(8)) ^ rcon;
            rcon <<= 1;
            t
        } else {
            sub_word(window[7])
        };
        // w[i] = w[i - 8] ^ w[i - 1]; the new words replace the oldest four.
        let mut words = [0u32; 4];
        for (w, oldest) in words.iter_mut().zip(&window) {
            temp ^= oldest;
            *w = temp;
        }
        window.copy_within(4.., 0);
        window[4..].copy_from_slice(&words);
        rk.planes[round] = round_key_planes(&words, round);
        add_round_key(&mut rk.planes[round], &SBOX_CONSTANT);
        words.zeroize();
        temp.zeroize();
    }
    window.zeroize();
}

/// SubWord: the S-box on each byte of `word`, through the same circuit as the
/// rounds, its constant `0x63` added back. Plane `i` gets bit `i` of the four
/// bytes (at bits 0, 8, 16, 24); the other bits of the planes are
/// don't-cares, masked off at the end.
#[inline]
fn sub_word(word: u32) -> u32 {
    const LOW_BITS: u32 = 0x0101_0101;
    let mut planes: State = core::array::from_fn(|i| (word >> i) & LOW_BITS);
    sub_bytes(&mut planes);
    let mut out = 0;
    for (i, plane) in planes.iter().enumerate() {
        out |= (plane & LOW_BITS) << i;
    }
    planes.zeroize();
    out ^ 0x6363_6363
}

/// Round key `round` from its four schedule words: given the lag of the state
/// it meets (ShiftRows undone `round` times; the amount is not a constant
/// here, so on the bytes), repeated in both blocks and packed into planes.
#[inline(never)]
fn round_key_planes(words: &[u32], round: usize) -> State {
    // With lag `lag`, the byte the specification has at row `i`, column `k`
    // sits at column `k + lag * i`: column `c` holds, at row `i`, the byte of
    // specification column `c - lag * i`, which is byte `i` (from the most
    // significant) of schedule word `c - lag * i`. A column is loaded little
    // endian (row `i` at bits `8 * i`), as `bitslice` does.
    let lag = round % 4;
    let mut columns = [0u32; 8];
    for c in 0..4 {
        let mut column = 0;
        for (i, shift) in [24, 16, 8, 0].into_iter().enumerate() {
            let k = (c + 4 * 4 - lag * i) % 4;
            column |= ((words[k] >> shift) & 0xff) << (8 * i);
        }
        // Both blocks of a batch.
        columns[c] = column;
        columns[4 + c] = column;
    }
    let planes = bitslice_words(columns);
    columns.zeroize();
    planes
}

fixsliced_cipher! {
    plane: u32,
    row_bits: 8,
    row_starts: 0x0101_0101,
    position_bit_clear: POSITION_BIT_CLEAR,
    // Called from `cipher` and twice in `fill_pools`: one copy.
    rounds_inline: inline(never),
}

// ---------------------------------------------------------------------------
// Conversion between blocks and bit planes
// ---------------------------------------------------------------------------

// Packing two blocks into planes is a permutation of the 256 bits of a batch,
// done by exchanging index bits, as in `soft.rs`. Each bit has an 8-bit index:
// 3 bits of word (which `u32` of eight) and 5 bits of position. Loading word
// `4 * block + column` with bytes `4 * column..4 * column + 4` of `block`,
// little endian, gives (`c1 c0` the column, `r1 r0` the row, `i2..i0` the bit
// in the byte, `b` the block):
//
// ```text
//             word        position
// loaded      b  c1 c0    r1 r0 i2 i1 i0
// wanted      i0 i2 i1    r1 r0 c1 c0 b     (8 * row + 2 * column + block)
// ```
//
// Three exchanges, (word bit, position bit) = (2, 0), (0, 1), (1, 2), trade
// `b`, `c0`, `c1` for `i0`, `i1`, `i2`. Plane `i` then is word
// `4 * i0 + 2 * i2 + i1`: the planes are the words in the order of `PLANE_WORD`.
// Each exchange is its own inverse, so unpacking runs them backwards.

/// `PLANE_WORD[i]`: the word that holds plane `i` after the exchanges.
const PLANE_WORD: [usize; 8] = [0, 4, 1, 5, 2, 6, 3, 7];

/// Bit masks of the positions in a `u32` whose position bit `k` is 0.
const POSITION_BIT_CLEAR: [u32; 3] = [0x5555_5555, 0x3333_3333, 0x0f0f_0f0f];

/// Packs two blocks (32 bytes) into bit planes.
#[inline]
fn bitslice(bytes: &[u8; BATCH_BYTES]) -> State {
    let mut words = [0u32; 8];
    let (chunks, _) = bytes.as_chunks::<4>();
    for (w, chunk) in words.iter_mut().zip(chunks) {
        *w = u32::from_le_bytes(*chunk);
    }
    let state = bitslice_words(words);
    words.zeroize();
    state
}

/// [`bitslice`] from the eight words it loads (word `4 * block + column`).
#[inline(always)]
fn bitslice_words(mut words: [u32; 8]) -> State {
    exchange_index_bits::<2, 0>(&mut words);
    exchange_index_bits::<0, 1>(&mut words);
    exchange_index_bits::<1, 2>(&mut words);
    let state = PLANE_WORD.map(|w| words[w]);
    words.zeroize();
    state
}

/// Unpacks bit planes into two blocks: the inverse of [`bitslice`], written
/// straight into `out`.
#[inline(always)]
fn store(state: &State, out: &mut [u8; BATCH_BYTES]) {
    let mut words = [0u32; 8];
    for (plane, w) in state.iter().zip(PLANE_WORD) {
        words[w] = *plane;
    }
    exchange_index_bits::<1, 2>(&mut words);
    exchange_index_bits::<0, 1>(&mut words);
    exchange_index_bits::<2, 0>(&mut words);
    let (chunks, _) = out.as_chunks_mut::<4>();
    for (chunk, w) in chunks.iter_mut().zip(&words) {
        *chunk = w.to_le_bytes();
    }
    // Not zeroized: the words are the output just written to `out`, and
    // zeroizing would keep them in memory instead of registers.
}

#[cfg(test)]
mod tests {
    //! This kernel against the specification (`soft.rs`, itself tested against
    //! FIPS 197, SP 800-38A and RustCrypto's `aes`), piece by piece; the
    //! whole-kernel comparisons over pool and counter boundaries are the shared
    //! ones in `aes.rs`.
    extern crate std;

    use std::format;

    use super::super::soft;
    use super::*;

    #[test]
    fn bitslice_layout_and_round_trip() {
        let mut bytes = [0u8; BATCH_BYTES];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = (i as u8).wrapping_mul(37) ^ 0x5a;
        }
        let state = bitslice(&bytes);
        for (k, byte) in bytes.iter().enumerate() {
            let (b, n) = (k / BLOCK_BYTES, k % BLOCK_BYTES);
            let position = 8 * (n % 4) + 2 * (n / 4) + b;
            for (i, plane) in state.iter().enumerate() {
                assert_eq!((plane >> position) & 1, u32::from(byte >> i) & 1);
            }
        }
        let mut back = [0u8; BATCH_BYTES];
        store(&state, &mut back);
        assert_eq!(back, bytes);
    }

    #[test]
    fn first_sub_bytes_is_the_first_round_of_every_pool_batch() {
        let mut rk = RoundKeys::zeroed();
        expand_key(
            &core::array::from_fn(|i| (i as u8).wrapping_mul(29) ^ 0xc3),
            &mut rk,
        );
        let mut first = FirstSubBytes::zeroed();
        first.compute(&rk);
        // Under Miri, the batches at the edges of the table's words.
        let batches: std::vec::Vec<usize> = if cfg!(miri) {
            std::vec![0, 2, 30, 32, 126, 128, 254]
        } else {
            (0..256).step_by(2).collect()
        };
        for j in batches {
            let mut bytes = [0u8; BATCH_BYTES];
            bytes[..BLOCK_BYTES].copy_from_slice(&(j as u128).to_be_bytes());
            bytes[BLOCK_BYTES..].copy_from_slice(&(j as u128 + 1).to_be_bytes());
            let mut want = bitslice(&bytes);
            add_round_key(&mut want, &rk.planes[0]);
            sub_bytes(&mut want);
            assert_eq!(first.of_batch(j), want, "counter {j}");
        }
    }

    #[test]
    fn sub_word_is_the_sbox_on_each_byte() {
        // FIPS 197 Figure 7: S(00) = 63, S(53) = ed, S(01) = 7c, S(ff) = 16.
        assert_eq!(sub_word(0x0053_01ff), 0x63ed_7c16);
        for x in 0..=255u32 {
            let word = (x * 0x0101_0101) ^ 0x00ff_5a00;
            let bytes = word.to_be_bytes().map(soft_sbox);
            assert_eq!(sub_word(word), u32::from_be_bytes(bytes), "{word:#010x}");
        }
    }

    /// One byte through `soft`'s S-box circuit.
    fn soft_sbox(x: u8) -> u8 {
        let planes: [u8; 8] = core::array::from_fn(|i| (x >> i) & 1);
        let out = soft::sbox_circuit(planes);
        (0..8).fold(0, |acc, i| acc | ((out[i] & 1) << i))
    }

    #[test]
    fn round_keys_match_the_key_schedule() {
        // FIPS 197, Appendix A.3: the AES-256 key and words of its schedule.
        let key: [u8; 32] = [
            0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae, 0xf0, 0x85, 0x7d,
            0x77, 0x81, 0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61, 0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3,
            0x09, 0x14, 0xdf, 0xf4,
        ];
        let mut rk = RoundKeys::zeroed();
        expand_key(&key, &mut rk);
        // Round keys 1 to 14 hold the S-box constant too (see the module docs).
        let mut constant = [0u8; BATCH_BYTES];
        store(&SBOX_CONSTANT, &mut constant);
        assert_eq!(constant, [0x63; BATCH_BYTES]);
        let words = |round: usize| {
            let mut planes = rk.planes[round];
            if round > 0 {
                add_round_key(&mut planes, &SBOX_CONSTANT);
            }
            shift_rows(&mut planes, round % 4);
            let mut bytes = [0u8; BATCH_BYTES];
            store(&planes, &mut bytes);
            assert_eq!(bytes[..BLOCK_BYTES], bytes[BLOCK_BYTES..], "replicated");
            let (w, _) = bytes.as_chunks::<4>();
            [0, 1, 2, 3].map(|k| u32::from_be_bytes(w[k]))
        };
        assert_eq!(words(0), [0x603deb10, 0x15ca71be, 0x2b73aef0, 0x857d7781]);
        assert_eq!(words(1)[3], 0x0914dff4);
        assert_eq!(words(2), [0x9ba35411, 0x8e6925af, 0xa51a8b5f, 0x2067fcde]);
        assert_eq!(words(3)[..2], [0xa8b09c1a, 0x93d194cd]);
        assert_eq!(words(14), [0xfe4890d1, 0xe6188d0b, 0x046df344, 0x706c631e]);
    }

    #[test]
    fn fips197_c3_aes256_cipher() {
        // FIPS 197, Appendix C.3: plaintext 00112233..ff under key 00..1f,
        // in either block of a batch.
        let key: [u8; 32] = core::array::from_fn(|i| i as u8);
        let plaintext: [u8; 16] = core::array::from_fn(|i| (i as u8) * 0x11);
        let ciphertext = [
            0x8e, 0xa2, 0xb7, 0xca, 0x51, 0x67, 0x45, 0xbf, 0xea, 0xfc, 0x49, 0x90, 0x4b, 0x49,
            0x60, 0x89,
        ];
        let mut rk = RoundKeys::zeroed();
        expand_key(&key, &mut rk);
        for half in 0..2 {
            let mut bytes = [0u8; BATCH_BYTES];
            bytes[16 * half..16 * half + 16].copy_from_slice(&plaintext);
            let mut state = bitslice(&bytes);
            cipher(&rk.planes, &mut state);
            store(&state, &mut bytes);
            assert_eq!(bytes[16 * half..16 * half + 16], ciphertext, "block {half}");
        }
    }

    #[test]
    fn matches_soft_on_keystream_and_pools() {
        let key = [0x3c; 32];
        let mut ours = [[0u8; 16]; 5];
        let mut spec = [[0u8; 16]; 5];
        for counter in [0, 254, u128::MAX - 2] {
            ctr_keystream(&key, counter, &mut ours);
            soft::ctr_keystream(&soft::expand_key(&key), counter, &mut spec);
            assert_eq!(ours, spec, "counter {counter:#x}");
        }
    }

    #[test]
    fn round_keys_debug_shows_no_bytes() {
        let mut rk = RoundKeys::zeroed();
        expand_key(&[0xab; 32], &mut rk);
        assert_eq!(format!("{rk:?}"), "RoundKeys { .. }");
    }
}
