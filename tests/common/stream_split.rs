//! The `stream_split` property, shared by the fuzz target
//! (`fuzz/fuzz_targets/stream_split.rs`, which includes this file by path) and
//! its regression tests (`tests/fuzz_regressions.rs`). Only `ratchet_rng` is
//! used here: the fuzz crate has none of the test crates' dependencies.

use ratchet_rng::rand_core::Rng;
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

/// The property on one input: byte 0 picks the generator (mod 6:
/// TurboShakeRng, ShakeRng, ChaChaKeyErasureRng, ChaCha12KeyErasureRng,
/// ChaCha20KeyErasureRng, AesCtrPoolRng), byte 1 is the key length `k`, then
/// `k` key bytes (fewer if the input ends), then the operations, two bytes each:
/// `op & 3` selects `fill_bytes` (0, 1), `next_u32` (2) or `next_u64` (3), and
/// for fills `len = (op >> 2) * 151 + arg` (up to ~9.7 KiB, crossing rate,
/// refill and pool boundaries). The reads must equal consecutive slices of one
/// long `fill_bytes` from a second generator with the same key (so `from_key`
/// is also deterministic). Inputs shorter than two bytes check nothing.
pub fn stream_split(data: &[u8]) {
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

/// Runs `ops` on `under_test` and compares what it read with one fill of the
/// same length from `reference`.
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
