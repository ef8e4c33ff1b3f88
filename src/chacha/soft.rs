//! Portable ChaCha: the RFC 8439 block function and the C2SP chacha8rand
//! group layout, in safe Rust.
//!
//! This file is the specification the SIMD backends are tested against, so it
//! follows the documents' names and layout:
//!
//! - [RFC 8439] §2.1–§2.3: [`quarter_round`], [`inner_block`] and [`block`], the
//!   ChaCha block function with a 32-bit block counter (state word 12) and a
//!   96-bit nonce (words 13–15), generic over the number of rounds.
//! - [C2SP chacha8rand] (Go's `internal/chacha8rand`, behind `math/rand/v2`'s
//!   `ChaCha8`): [`group`] computes four blocks side by side and writes them
//!   interleaved word by word; [`key_period`] runs the four groups of one key
//!   and derives the next key from the last 32 bytes.
//!
//! Every operation is an add, xor or fixed rotation on 32-bit words, and every
//! index is a constant of the algorithm: there are no branches or memory
//! accesses that depend on key or output bytes.
//!
//! [RFC 8439]: https://www.rfc-editor.org/rfc/rfc8439
//! [C2SP chacha8rand]: https://c2sp.org/chacha8rand

#![forbid(unsafe_code)]

use zeroize::Zeroize;

/// The four constant words "expand 32-byte k" (RFC 8439 §2.3), state words 0–3.
pub(crate) const CONSTANTS: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// Words in the ChaCha state (a 4×4 matrix of `u32`, RFC 8439 §1.1).
pub(crate) const STATE_WORDS: usize = 16;

/// Words in a ChaCha key (256 bits).
pub(crate) const KEY_WORDS: usize = 8;

/// Words in an RFC 8439 nonce (96 bits).
pub(crate) const NONCE_WORDS: usize = 3;

/// Index of the first key word in the state (words 4–11).
pub(crate) const KEY_INDEX: usize = 4;

/// Index of the 32-bit block counter in the state.
pub(crate) const COUNTER_INDEX: usize = 12;

/// Index of the first nonce word in the state (words 13–15).
pub(crate) const NONCE_INDEX: usize = 13;

// The RFC 8439 §2.3 state layout: 4 constants, 8 key words, the block counter,
// 3 nonce words.
const _: () = assert!(
    CONSTANTS.len() == KEY_INDEX
        && KEY_INDEX + KEY_WORDS == COUNTER_INDEX
        && COUNTER_INDEX + 1 == NONCE_INDEX
        && NONCE_INDEX + NONCE_WORDS == STATE_WORDS
);

/// Bytes in one ChaCha block of keystream.
pub(crate) const BLOCK_BYTES: usize = 64;

/// ChaCha blocks computed side by side in one chacha8rand group; each one is
/// a "lane" of the group.
pub(crate) const GROUP_BLOCKS: usize = 4;

/// Bytes written by one [`group`].
pub(crate) const GROUP_BYTES: usize = GROUP_BLOCKS * BLOCK_BYTES;

/// Groups computed under one key: block counters 0 to 15.
pub(crate) const KEY_PERIOD_GROUPS: usize = 4;

/// The first block counter of each group of a key period.
const GROUP_COUNTERS: [u32; KEY_PERIOD_GROUPS] = [0, 4, 8, 12];

/// Bytes computed under one key (1024), output bytes plus the next key.
pub(crate) const KEY_PERIOD_BYTES: usize = KEY_PERIOD_GROUPS * GROUP_BYTES;

/// Bytes of a ChaCha key.
pub(crate) const KEY_BYTES: usize = KEY_WORDS * 4;

/// Bytes of output per key in chacha8rand: all of a key period except the last
/// [`KEY_BYTES`], which become the next key.
pub(crate) const KEY_PERIOD_OUTPUT_BYTES: usize = KEY_PERIOD_BYTES - KEY_BYTES;

/// Returns `ROUNDS / 2`, failing to compile unless `ROUNDS` is even and
/// positive (ChaCha's rounds come in column/diagonal pairs).
pub(crate) const fn double_rounds<const ROUNDS: usize>() -> usize {
    assert!(
        ROUNDS > 0 && ROUNDS.is_multiple_of(2),
        "ChaCha needs a positive, even number of rounds"
    );
    ROUNDS / 2
}

/// The ChaCha quarter round on the state, `QUARTERROUND(a, b, c, d)`
/// (RFC 8439 §2.1 on the words at indices `a`, `b`, `c`, `d`, §2.2).
///
/// # Panics
/// If an index is not below [`STATE_WORDS`]; callers pass the constant
/// indices of [`inner_block`].
#[inline(always)]
pub(crate) const fn quarter_round(
    state: &mut [u32; STATE_WORDS],
    a: usize,
    b: usize,
    c: usize,
    d: usize,
) {
    state[a] = state[a].wrapping_add(state[b]);
    state[d] = (state[d] ^ state[a]).rotate_left(16);
    state[c] = state[c].wrapping_add(state[d]);
    state[b] = (state[b] ^ state[c]).rotate_left(12);
    state[a] = state[a].wrapping_add(state[b]);
    state[d] = (state[d] ^ state[a]).rotate_left(8);
    state[c] = state[c].wrapping_add(state[d]);
    state[b] = (state[b] ^ state[c]).rotate_left(7);
}

/// One column round and one diagonal round: two ChaCha rounds
/// (`inner_block`, RFC 8439 §2.3.1).
#[inline(always)]
pub(crate) const fn inner_block(state: &mut [u32; STATE_WORDS]) {
    quarter_round(state, 0, 4, 8, 12);
    quarter_round(state, 1, 5, 9, 13);
    quarter_round(state, 2, 6, 10, 14);
    quarter_round(state, 3, 7, 11, 15);
    quarter_round(state, 0, 5, 10, 15);
    quarter_round(state, 1, 6, 11, 12);
    quarter_round(state, 2, 7, 8, 13);
    quarter_round(state, 3, 4, 9, 14);
}

/// The ChaCha block function with `ROUNDS` rounds (RFC 8439 §2.3; 20 rounds
/// is ChaCha20): the state words after the rounds plus the input state
/// (full feed-forward). Serialize each word little-endian for the 64
/// keystream bytes.
///
/// `ROUNDS` must be even and positive; anything else fails to compile.
///
/// # Security
/// The result is keystream. The caller owns it and must wipe it when done.
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "the RFC 8439 reference: tests (and hazmat) use it"
    )
)]
pub(crate) fn block<const ROUNDS: usize>(
    key: &[u32; KEY_WORDS],
    counter: u32,
    nonce: &[u32; NONCE_WORDS],
) -> [u32; STATE_WORDS] {
    let double_rounds = const { double_rounds::<ROUNDS>() };

    // cccc cccc cccc cccc / kkkk ×8 / bbbb nnnn nnnn nnnn
    let mut initial = [0u32; STATE_WORDS];
    initial[..KEY_INDEX].copy_from_slice(&CONSTANTS);
    initial[KEY_INDEX..COUNTER_INDEX].copy_from_slice(key);
    initial[COUNTER_INDEX] = counter;
    initial[NONCE_INDEX..].copy_from_slice(nonce);

    let mut state = initial;
    for _ in 0..double_rounds {
        inner_block(&mut state);
    }
    for (word, input) in state.iter_mut().zip(&initial) {
        *word = word.wrapping_add(*input);
    }
    initial.zeroize();
    state
}

/// The state of a group, lane-parallel: `x[w][lane]` is state word `w` of the
/// block with counter `c + lane`. Each row is one 128-bit vector, and in
/// memory the rows are already the chacha8rand output order.
type GroupState = [[u32; GROUP_BLOCKS]; STATE_WORDS];

/// Runs the four blocks of a group (block counters `counter + lane`, wrapping;
/// nonce zero) and adds the key back into words 4–11 only.
///
/// chacha8rand skips the feed-forward of the constants, counter and nonce:
/// they are public, so adding them back protects nothing (C2SP chacha8rand,
/// "Why the subtractions?").
///
/// # Security
/// The result holds keystream; the caller wipes it.
#[inline(always)]
fn group_state<const ROUNDS: usize>(key: &[u32; KEY_WORDS], counter: u32) -> GroupState {
    let double_rounds = const { double_rounds::<ROUNDS>() };

    let mut x: GroupState = [[0; GROUP_BLOCKS]; STATE_WORDS];
    for (row, constant) in x[..KEY_INDEX].iter_mut().zip(CONSTANTS) {
        *row = [constant; GROUP_BLOCKS];
    }
    for (row, key_word) in x[KEY_INDEX..COUNTER_INDEX].iter_mut().zip(key) {
        *row = [*key_word; GROUP_BLOCKS];
    }
    for (block_counter, lane) in x[COUNTER_INDEX].iter_mut().zip(0..) {
        // Wrapping: a group may straddle the end of the counter space.
        *block_counter = counter.wrapping_add(lane);
    }
    // The nonce rows, words 13–15, stay zero.

    for _ in 0..double_rounds {
        // The four blocks never mix, so this loop over lanes runs them side by
        // side: LLVM's loop vectorizer turns it into `inner_block` on whole
        // rows, one SSE2/NEON register per state word. Keep the lane loop
        // innermost with a whole double round as its body. Written as per-row
        // operations, the SLP vectorizer leaves the rounds scalar on SSE2 (it
        // prices vector rotations too high: half the speed); with a smaller body
        // the loop is fully unrolled before the loop vectorizer sees it.
        #[allow(
            clippy::needless_range_loop,
            reason = "index loops are cheaper under Miri"
        )]
        for lane in 0..GROUP_BLOCKS {
            // Index loops, not `array::from_fn` and `zip`: the same code once
            // optimized, half the time under Miri (where the thread layer's
            // refills run through here: 1.4 s a key period before).
            let mut state = [0u32; STATE_WORDS];
            for w in 0..STATE_WORDS {
                state[w] = x[w][lane];
            }
            inner_block(&mut state);
            for w in 0..STATE_WORDS {
                x[w][lane] = state[w];
            }
        }
    }

    for (row, key_word) in x[KEY_INDEX..COUNTER_INDEX].iter_mut().zip(key) {
        for word in row {
            *word = word.wrapping_add(*key_word);
        }
    }
    x
}

/// Writes `rows` to `out` as little-endian words in memory order (row by row,
/// lane by lane), stopping at whichever ends first.
#[inline(always)]
fn store_le(rows: &[[u32; GROUP_BLOCKS]], out: &mut [u8]) {
    for (bytes, word) in out.chunks_exact_mut(4).zip(rows.iter().flatten()) {
        bytes.copy_from_slice(&word.to_le_bytes());
    }
}

/// One chacha8rand group: the four ChaCha blocks with block counters
/// `counter`, `counter + 1`, `counter + 2`, `counter + 3` (wrapping), nonce
/// zero and `ROUNDS` rounds (8 for chacha8rand), with the feed-forward applied
/// to the key words 4–11 only, written interleaved: bytes `16 * w + 4 * lane`
/// onwards hold state word `w` of block `counter + lane`, little-endian.
///
/// `ROUNDS` must be even and positive; anything else fails to compile.
///
/// # Security
/// `out` receives keystream. The working state is wiped before returning.
pub(crate) fn group<const ROUNDS: usize>(
    key: &[u32; KEY_WORDS],
    counter: u32,
    out: &mut [u8; GROUP_BYTES],
) {
    let mut x = group_state::<ROUNDS>(key, counter);
    store_le(&x, out);
    x.zeroize();
}

/// One chacha8rand key period: the groups with block counters 0, 4, 8 and 12
/// under `key` give 1024 bytes; the first [`KEY_PERIOD_OUTPUT_BYTES`] (992)
/// are written to `out` and the last 32 become the next key (eight
/// little-endian words), which replaces `*key`.
///
/// With `ROUNDS = 8`, calling this repeatedly from a 32-byte seed read as
/// eight little-endian words yields Go's `math/rand/v2` `ChaCha8` byte stream.
///
/// # Security
/// `out` receives keystream. The old key is overwritten in place, and the
/// group states (the only memory this function owns that holds key or
/// keystream words) are wiped before returning. Copies the compiler makes in
/// registers or stack slots (such as the per-lane working words) are out of
/// reach of safe code.
pub(crate) fn key_period<const ROUNDS: usize>(
    key: &mut [u32; KEY_WORDS],
    out: &mut [u8; KEY_PERIOD_OUTPUT_BYTES],
) {
    // 992 = 3 × 256 + 224: three whole groups, then the last group's output.
    let (full_groups, last_group) = out.as_chunks_mut::<GROUP_BYTES>();
    let [counters @ .., last_counter] = GROUP_COUNTERS;

    for (out_group, counter) in full_groups.iter_mut().zip(counters) {
        group::<ROUNDS>(key, counter, out_group);
    }

    // The last group's final 32 bytes are its output words 56..64: state
    // words 14 and 15 of the four lanes. They are the next key, in that order.
    let mut x = group_state::<ROUNDS>(key, last_counter);
    let (output_rows, key_rows) = x.split_at(STATE_WORDS - KEY_WORDS / GROUP_BLOCKS);
    store_le(output_rows, last_group);
    for (key_word, next) in key.iter_mut().zip(key_rows.iter().flatten()) {
        *key_word = *next;
    }
    x.zeroize();
}

#[cfg(test)]
mod tests {
    //! Vectors:
    //! - RFC 8439 §2.1.1, §2.2.1, §2.3.2 and Appendix A.1, copied from the RFC
    //!   text (<https://www.rfc-editor.org/rfc/rfc8439>).
    //! - `tests/data/chacha8rand.txt`: output of Go's `math/rand/v2`
    //!   `NewChaCha8` (go1.26), see the file's header line.
    //! - The C2SP chacha8rand "Sample output" (<https://c2sp.org/chacha8rand>).
    //! - Oracles: the RustCrypto `chacha20` crate (IETF variant: 32-bit
    //!   counter, 96-bit nonce) for 8, 12 and 20 rounds.

    extern crate std;

    use super::*;
    use chacha20::cipher::{KeyIvInit, StreamCipherCore};
    use chacha20::variants::Ietf;
    use chacha20::{ChaChaCore, R8, R12, R20, Rounds};
    use proptest::prelude::*;
    use std::vec::Vec;

    /// Go's chacha8rand output, as produced by `math/rand/v2` (see header).
    const GO_VECTORS: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/chacha8rand.txt"
    ));

    fn hex(s: &str) -> Vec<u8> {
        assert!(s.len().is_multiple_of(2), "odd-length hex");
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digit"))
            .collect()
    }

    fn le_bytes(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn le_words<const N: usize>(bytes: &[u8]) -> [u32; N] {
        assert_eq!(bytes.len(), 4 * N);
        core::array::from_fn(|i| u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap()))
    }

    /// The named value of `tests/data/chacha8rand.txt` (`name: hex` lines).
    fn go_vector(name: &str) -> Vec<u8> {
        let value = GO_VECTORS
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
            .unwrap_or_else(|| panic!("{name} missing from chacha8rand.txt"));
        hex(value)
    }

    /// `n` bytes of the chacha8rand stream from a 32-byte seed, by repeated
    /// `key_period`.
    fn key_period_stream<const ROUNDS: usize>(seed: &[u8], n: usize) -> Vec<u8> {
        let mut key = le_words::<KEY_WORDS>(seed);
        let mut stream = Vec::new();
        let mut out = [0u8; KEY_PERIOD_OUTPUT_BYTES];
        while stream.len() < n {
            key_period::<ROUNDS>(&mut key, &mut out);
            stream.extend_from_slice(&out);
        }
        stream.truncate(n);
        stream
    }

    /// One keystream block from the `chacha20` crate. `ChaChaCore<R, Ietf>`
    /// is the core behind its `ChaCha8`/`ChaCha12`/`ChaCha20` types; the core
    /// is used directly because the `StreamCipher` wrapper refuses to produce
    /// the final block (counter `u32::MAX`).
    fn oracle_block<R: Rounds>(key: &[u32; KEY_WORDS], counter: u32, nonce: &[u32; 3]) -> Vec<u8> {
        let key: [u8; KEY_BYTES] = le_bytes(key).try_into().unwrap();
        let nonce: [u8; 12] = le_bytes(nonce).try_into().unwrap();
        let mut core = ChaChaCore::<R, Ietf>::new(&key.into(), &nonce.into());
        core.set_block_pos(counter);
        let mut keystream = Default::default();
        core.write_keystream_block(&mut keystream);
        keystream.to_vec()
    }

    /// A group built from the C2SP description: four plain ChaCha blocks
    /// (nonce zero) from `keystream_block`, minus the constants in words 0–3
    /// and the counter in word 12, interleaved word by word.
    fn reference_group(
        key: &[u32; KEY_WORDS],
        counter: u32,
        keystream_block: impl Fn(&[u32; KEY_WORDS], u32, &[u32; 3]) -> Vec<u8>,
    ) -> Vec<u8> {
        let blocks: Vec<[u32; STATE_WORDS]> = (0..)
            .take(GROUP_BLOCKS)
            .map(|lane| {
                let block_counter = counter.wrapping_add(lane);
                let mut words =
                    le_words::<STATE_WORDS>(&keystream_block(key, block_counter, &[0; 3]));
                for (word, constant) in words.iter_mut().zip(CONSTANTS) {
                    *word = word.wrapping_sub(constant);
                }
                words[COUNTER_INDEX] = words[COUNTER_INDEX].wrapping_sub(block_counter);
                words
            })
            .collect();
        let interleaved: Vec<u32> = (0..STATE_WORDS)
            .flat_map(|w| blocks.iter().map(move |b| b[w]))
            .collect();
        le_bytes(&interleaved)
    }

    fn group_bytes<const ROUNDS: usize>(key: &[u32; KEY_WORDS], counter: u32) -> Vec<u8> {
        let mut out = [0u8; GROUP_BYTES];
        group::<ROUNDS>(key, counter, &mut out);
        out.to_vec()
    }

    // RFC 8439 §2.1.1: test vector for the ChaCha quarter round.
    #[test]
    fn rfc8439_2_1_1_quarter_round() {
        let mut state = [0u32; STATE_WORDS];
        state[..4].copy_from_slice(&[0x1111_1111, 0x0102_0304, 0x9b8d_6f43, 0x0123_4567]);
        quarter_round(&mut state, 0, 1, 2, 3);
        assert_eq!(
            state[..4],
            [0xea2a_92f4, 0xcb1c_f8ce, 0x4581_472e, 0x5881_c4bb]
        );
        assert!(state[4..].iter().all(|&w| w == 0));
    }

    // RFC 8439 §2.2.1: QUARTERROUND(2, 7, 8, 13) on a sample ChaCha state.
    #[test]
    fn rfc8439_2_2_1_quarter_round_on_state() {
        let mut state = [
            0x8795_31e0,
            0xc5ec_f37d,
            0x5164_61b1,
            0xc9a6_2f8a, //
            0x44c2_0ef3,
            0x3390_af7f,
            0xd9fc_690b,
            0x2a5f_714c, //
            0x5337_2767,
            0xb00a_5631,
            0x974c_541a,
            0x359e_9963, //
            0x5c97_1061,
            0x3d63_1689,
            0x2098_d9d6,
            0x91db_d320,
        ];
        quarter_round(&mut state, 2, 7, 8, 13);
        let expected = [
            0x8795_31e0,
            0xc5ec_f37d,
            0xbdb8_86dc,
            0xc9a6_2f8a, //
            0x44c2_0ef3,
            0x3390_af7f,
            0xd9fc_690b,
            0xcfac_afd2, //
            0xe46b_ea80,
            0xb00a_5631,
            0x974c_541a,
            0x359e_9963, //
            0x5c97_1061,
            0xccc0_7c79,
            0x2098_d9d6,
            0x91db_d320,
        ];
        assert_eq!(state, expected);
    }

    // RFC 8439 §2.3.2: test vector for the ChaCha20 block function.
    #[test]
    fn rfc8439_2_3_2_block_function() {
        let key = le_words::<KEY_WORDS>(&hex(
            "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
        ));
        let nonce = le_words::<NONCE_WORDS>(&hex("000000090000004a00000000"));
        let state = block::<20>(&key, 1, &nonce);
        // "ChaCha state at the end of the ChaCha20 operation"
        let expected = [
            0xe4e7_f110,
            0x1559_3bd1,
            0x1fdd_0f50,
            0xc471_20a3, //
            0xc7f4_d1c7,
            0x0368_c033,
            0x9aaa_2204,
            0x4e6c_d4c3, //
            0x4664_82d2,
            0x09aa_9f07,
            0x05d7_c214,
            0xa202_8bd9, //
            0xd19c_12b5,
            0xb94e_16de,
            0xe883_d0cb,
            0x4e3c_50a2,
        ];
        assert_eq!(state, expected);
        // "Serialized Block"
        assert_eq!(
            le_bytes(&state),
            hex(concat!(
                "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e",
                "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e",
            ))
        );
    }

    // RFC 8439 Appendix A.1: the ChaCha20 block functions, test vectors #1–#5
    // (key, nonce, block counter, keystream).
    #[test]
    fn rfc8439_a_1_block_functions() {
        let zero_key = "0000000000000000000000000000000000000000000000000000000000000000";
        let zero_nonce = "000000000000000000000000";
        let vectors = [
            // Test Vector #1
            (
                zero_key,
                zero_nonce,
                0,
                concat!(
                    "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7",
                    "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586",
                ),
            ),
            // Test Vector #2
            (
                zero_key,
                zero_nonce,
                1,
                concat!(
                    "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed",
                    "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f",
                ),
            ),
            // Test Vector #3
            (
                "0000000000000000000000000000000000000000000000000000000000000001",
                zero_nonce,
                1,
                concat!(
                    "3aeb5224ecf849929b9d828db1ced4dd832025e8018b8160b82284f3c949aa5a",
                    "8eca00bbb4a73bdad192b5c42f73f2fd4e273644c8b36125a64addeb006c13a0",
                ),
            ),
            // Test Vector #4
            (
                "00ff000000000000000000000000000000000000000000000000000000000000",
                zero_nonce,
                2,
                concat!(
                    "72d54dfbf12ec44b362692df94137f328fea8da73990265ec1bbbea1ae9af0ca",
                    "13b25aa26cb4a648cb9b9d1be65b2c0924a66c54d545ec1b7374f4872e99f096",
                ),
            ),
            // Test Vector #5
            (
                zero_key,
                "000000000000000000000002",
                0,
                concat!(
                    "c2c64d378cd536374ae204b9ef933fcd1a8b2288b3dfa49672ab765b54ee27c7",
                    "8a970e0e955c14f3a88e741b97c286f75f8fc299e8148362fa198a39531bed6d",
                ),
            ),
        ];
        for (number, (key, nonce, counter, keystream)) in vectors.into_iter().enumerate() {
            let key = le_words::<KEY_WORDS>(&hex(key));
            let nonce = le_words::<NONCE_WORDS>(&hex(nonce));
            assert_eq!(
                le_bytes(&block::<20>(&key, counter, &nonce)),
                hex(keystream),
                "RFC 8439 A.1 test vector #{}",
                number + 1
            );
        }
    }

    // Go's math/rand/v2 ChaCha8 (tests/data/chacha8rand.txt): `read4096` and
    // the `uint64x600_le` stream for both seeds, by repeated `key_period::<8>`.
    // Under Miri (seconds per KiB of ChaCha8) the first stream of each
    // seed, up to 8 bytes past the first re-key.
    #[test]
    fn go_chacha8rand_streams() {
        assert!(GO_VECTORS.starts_with("# Go chacha8rand"));
        let streams: &[&str] = if cfg!(miri) {
            &["read4096"]
        } else {
            &["read4096", "uint64x600_le"]
        };
        for seed_name in ["i", "de"] {
            let seed = go_vector(&std::format!("chacha8rand_seed_{seed_name}_seed"));
            assert_eq!(seed.len(), KEY_BYTES);
            for stream in streams {
                let expected = go_vector(&std::format!("chacha8rand_seed_{seed_name}_{stream}"));
                assert!(
                    expected.len() > 4 * KEY_PERIOD_OUTPUT_BYTES,
                    "crosses 4 re-keys"
                );
                let len = if cfg!(miri) {
                    KEY_PERIOD_OUTPUT_BYTES + 8
                } else {
                    expected.len()
                };
                assert_eq!(
                    key_period_stream::<8>(&seed, len),
                    expected[..len],
                    "seed {seed_name}, {stream}"
                );
            }
        }
    }

    // C2SP chacha8rand "Sample output": seed "ABCDEFGHIJKLMNOPQRSTUVWXYZ123456",
    // the first, 32nd (bytes 992..1024, the first bytes under the second key)
    // and last (93rd) lines of the 2976-byte sample.
    #[test]
    fn c2sp_chacha8rand_sample() {
        let stream = key_period_stream::<8>(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ123456", 2976);
        assert_eq!(
            stream[..32],
            hex("a516463d06b673b73cbc6aa622af60117c288d41d999258cd65cdc7e037ee07e")
        );
        assert_eq!(
            stream[992..1024],
            hex("87045ee072df415f1d6be21a1e7ebd251da462d604409fbe46851883d458bf65")
        );
        assert_eq!(
            stream[2944..],
            hex("fa19c615bd23b5edc023cc3ed57fd9024c376244a305afac1fa1ff4bd3c6d9dd")
        );
    }

    // A group straddling the end of the 32-bit counter space wraps (no
    // overflow panic in debug builds) and each lane is the block at
    // `counter + lane mod 2^32`.
    #[test]
    fn group_counter_wraps() {
        let key = [1, 2, 3, 4, 5, 6, 7, 8].map(|w: u32| w.wrapping_mul(0x9e37_79b9));
        for counter in [u32::MAX - 3, u32::MAX - 2, u32::MAX - 1, u32::MAX] {
            let expected = reference_group(&key, counter, |k, c, n| le_bytes(&block::<8>(k, c, n)));
            assert_eq!(
                group_bytes::<8>(&key, counter),
                expected,
                "counter {counter:#x}"
            );
        }
        // Lanes past the wrap are the blocks at counters 0, 1, 2.
        let wrapped = group_bytes::<8>(&key, u32::MAX);
        let from_zero = group_bytes::<8>(&key, 0);
        for (w, (wrapped_row, zero_row)) in wrapped
            .chunks_exact(16)
            .zip(from_zero.chunks_exact(16))
            .enumerate()
        {
            assert_eq!(wrapped_row[4..], zero_row[..12], "word {w}");
        }
    }

    fn counter_strategy() -> impl Strategy<Value = u32> {
        prop_oneof![any::<u32>(), 0..8u32, u32::MAX - 8..=u32::MAX]
    }

    proptest! {
        // The RFC 8439 block function equals the `chacha20` crate's keystream
        // at the same block position, for 8, 12 and 20 rounds.
        #[test]
        fn block_matches_chacha20_crate(
            key in any::<[u32; KEY_WORDS]>(),
            counter in counter_strategy(),
            nonce in any::<[u32; NONCE_WORDS]>(),
        ) {
            prop_assert_eq!(le_bytes(&block::<8>(&key, counter, &nonce)), oracle_block::<R8>(&key, counter, &nonce));
            prop_assert_eq!(le_bytes(&block::<12>(&key, counter, &nonce)), oracle_block::<R12>(&key, counter, &nonce));
            prop_assert_eq!(le_bytes(&block::<20>(&key, counter, &nonce)), oracle_block::<R20>(&key, counter, &nonce));
        }

        // `group` equals the C2SP description applied to the `chacha20`
        // crate's blocks, for 8, 12 and 20 rounds.
        #[test]
        fn group_matches_chacha20_crate(
            key in any::<[u32; KEY_WORDS]>(),
            counter in counter_strategy(),
        ) {
            prop_assert_eq!(group_bytes::<8>(&key, counter), reference_group(&key, counter, oracle_block::<R8>));
            prop_assert_eq!(group_bytes::<12>(&key, counter), reference_group(&key, counter, oracle_block::<R12>));
            prop_assert_eq!(group_bytes::<20>(&key, counter), reference_group(&key, counter, oracle_block::<R20>));
        }

        // `key_period` is the groups at counters 0, 4, 8, 12 concatenated:
        // 992 bytes of output, then the next key.
        #[test]
        fn key_period_is_four_groups(key in any::<[u32; KEY_WORDS]>()) {
            let mut expected = Vec::new();
            for counter in [0, 4, 8, 12] {
                expected.extend(group_bytes::<12>(&key, counter));
            }
            let mut next_key = key;
            let mut out = [0u8; KEY_PERIOD_OUTPUT_BYTES];
            key_period::<12>(&mut next_key, &mut out);
            prop_assert_eq!(&out[..], &expected[..KEY_PERIOD_OUTPUT_BYTES]);
            prop_assert_eq!(le_bytes(&next_key), &expected[KEY_PERIOD_OUTPUT_BYTES..]);
        }
    }
}
