//! Fuzz inputs kept as named regression tests (see `fuzz/README.md`).
//!
//! Each test feeds one fuzzer input, byte for byte, through the same property as
//! its target in `fuzz/fuzz_targets/` (the checks are mirrored here on the public
//! API, so they run in `cargo test` on every CI configuration, qemu included). A
//! crash found by the fuzzer becomes a test here named after the bug, whose doc
//! comment says what went wrong and which commit fixed it; the fix lands together
//! with the test.
//!
//! No fuzzer crash has been found so far. The inputs below are corpus seeds:
//! inputs written by hand to reach the boundaries the targets are about, kept so
//! that those paths run on every configuration even without the fuzzer.

use ratchet_rng::rand_core::Rng;
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

/// The `stream_split` target's property on one input: byte 0 picks the generator,
/// byte 1 the key length, then the key, then two-byte operations (`op & 3`: 0, 1
/// fill `(op >> 2) * 151 + arg` bytes, 2 `next_u32`, 3 `next_u64`). The reads
/// must equal slices of one long `fill_bytes` from a second generator.
fn stream_split(data: &[u8]) {
    fn check<R: Rng>(mut under_test: R, mut reference: R, ops: &[u8]) {
        let mut got = Vec::new();
        for op in ops.chunks_exact(2) {
            let (code, arg) = (op[0], usize::from(op[1]));
            match code & 3 {
                0 | 1 => {
                    let mut buf = vec![0u8; usize::from(code >> 2) * 151 + arg];
                    under_test.fill_bytes(&mut buf);
                    got.extend_from_slice(&buf);
                }
                2 => got.extend_from_slice(&under_test.next_u32().to_le_bytes()),
                _ => got.extend_from_slice(&under_test.next_u64().to_le_bytes()),
            }
        }
        let mut want = vec![0u8; got.len()];
        reference.fill_bytes(&mut want);
        assert_eq!(got, want, "split reads differ from one long fill");
    }
    let [which, key_len, rest @ ..] = data else {
        return;
    };
    let (key, ops) = rest.split_at(usize::from(*key_len).min(rest.len()));
    match which % 6 {
        0 => check(
            TurboShakeRng::from_key(key),
            TurboShakeRng::from_key(key),
            ops,
        ),
        1 => check(ShakeRng::from_key(key), ShakeRng::from_key(key), ops),
        2 => check(
            ChaChaKeyErasureRng::from_key(key),
            ChaChaKeyErasureRng::from_key(key),
            ops,
        ),
        3 => check(
            ChaCha12KeyErasureRng::from_key(key),
            ChaCha12KeyErasureRng::from_key(key),
            ops,
        ),
        4 => check(
            ChaCha20KeyErasureRng::from_key(key),
            ChaCha20KeyErasureRng::from_key(key),
            ops,
        ),
        _ => check(
            AesCtrPoolRng::from_key(key),
            AesCtrPoolRng::from_key(key),
            ops,
        ),
    }
}

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
