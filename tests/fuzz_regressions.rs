//! Fuzz inputs kept as named regression tests (see `fuzz/README.md`).
//!
//! Each test feeds one fuzzer input, byte for byte, through the same property as
//! its target in `fuzz/fuzz_targets/`, so it runs in `cargo test` on every CI
//! configuration, qemu included. Where a target's property needs nothing but the
//! crate, it is one function in `tests/common/` that the target includes by path
//! (`stream_split`); otherwise the check is mirrored here on the public API. A
//! crash found by the fuzzer becomes a test here named after the bug, whose doc
//! comment says what went wrong and which commit fixed it; the fix lands together
//! with the test.
//!
//! No fuzzer crash has been found so far. The inputs below are corpus seeds:
//! inputs written by hand to reach the boundaries the targets are about, kept so
//! that those paths run on every configuration even without the fuzzer.

use crate::common;

use common::stream_split::stream_split;

/// Corpus seed for `stream_split`, one per generator: a 3-byte key, then a
/// `next_u32` that leaves the buffer unaligned, a fill of `7 * 151 + 63 = 1120`
/// bytes (past the sponges' 1088-byte ratchet and ChaCha's 992-byte period), a
/// `next_u64` straddling the refill, and a fill of `26 * 151 + 150 = 4076` bytes
/// (past the AES pool's 4064 bytes).
#[test]
fn stream_split_seed_unaligned_reads_across_every_refill_size() {
    for generator in 0..6u8 {
        let input = [
            generator, 3, b'k', b'e', b'y', // generator, key
            0x02, 0x00, // next_u32
            0x1c, 0x3f, // fill 7 * 151 + 63
            0x03, 0x00, // next_u64
            0x68, 0x96, // fill 26 * 151 + 150
        ];
        stream_split(&input);
    }
}

/// Corpus seed for `backends` (check 5, AES-CTR): the counter starts 3 blocks
/// below 2^128 and 8 blocks are generated, so the big-endian counter wraps to 0
/// inside one batch of the SIMD kernels. Every available backend must equal
/// `soft`, which must equal AES-256 of each wrapped counter block.
#[cfg(feature = "hazmat")]
#[test]
fn backends_seed_ctr_counter_wraps_inside_a_batch() {
    use ratchet_rng::hazmat::Aes256;

    let key = [0x5a; 32];
    let counter = u128::MAX - 2;
    let mut want = [[0u8; 16]; 8];
    Aes256::soft().ctr_keystream(&key, counter, &mut want);
    // The wrap itself: block 3 is counter 0, i.e. the keystream from 0.
    let mut from_zero = [[0u8; 16]; 5];
    Aes256::soft().ctr_keystream(&key, 0, &mut from_zero);
    assert_eq!(want[3..], from_zero);
    for aes in Aes256::available() {
        let mut got = [[0u8; 16]; 8];
        aes.ctr_keystream(&key, counter, &mut got);
        assert_eq!(got, want, "{}", aes.name());
    }
}
