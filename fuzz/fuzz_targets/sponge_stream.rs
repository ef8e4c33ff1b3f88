//! Differential target for the sponge generators: for a key and a sequence of
//! reads taken from the fuzzer's input, the reads must equal consecutive slices
//! of one long `fill_bytes` from a second generator with the same key, and
//! `from_key` must be deterministic (it never panics, whatever the bytes).
//!
//! Input layout: byte 0 selects the generator (even: TurboShakeRng, odd:
//! ShakeRng), byte 1 is the key length `k`, then `k` key bytes, then the
//! operations, two bytes each: `op & 3` selects `fill_bytes` (0, 1), `next_u32`
//! (2) or `next_u64` (3), and for fills `len = (op >> 2) * 37 + arg` (up to
//! ~2.6 KiB, crossing rate and ratchet boundaries).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ratchet_rng::rand_core::Rng;
use ratchet_rng::{ShakeRng, TurboShakeRng};

fn check<R: Rng>(mut under_test: R, mut reference: R, ops: &[u8]) {
    let mut got = Vec::new();
    for op in ops.chunks_exact(2) {
        let (code, arg) = (op[0], usize::from(op[1]));
        match code & 3 {
            0 | 1 => {
                let len = usize::from(code >> 2) * 37 + arg;
                let mut buf = vec![0u8; len];
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

fuzz_target!(|data: &[u8]| {
    let [which, key_len, rest @ ..] = data else {
        return;
    };
    let key_len = usize::from(*key_len).min(rest.len());
    let (key, ops) = rest.split_at(key_len);
    if which % 2 == 0 {
        check(TurboShakeRng::from_key(key), TurboShakeRng::from_key(key), ops);
    } else {
        check(ShakeRng::from_key(key), ShakeRng::from_key(key), ops);
    }
});
