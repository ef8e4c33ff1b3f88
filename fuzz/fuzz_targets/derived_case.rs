//! A derived fuzz case with a generator field (feature `arbitrary`, issue 47):
//! `#[derive(Arbitrary)]` builds the generator from the input's first seed bytes
//! (`from_seed`, zero-padded), then a list of reads and save/restore round trips.
//! Property: the reads, with the generator replaced by `restore(save())` wherever
//! the case says, equal consecutive slices of one long `fill_bytes` from a twin
//! restored from the generator's first save (so `Arbitrary`, `save` and
//! `restore` all keep the one stream, at any position).
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[allow(dead_code, reason = "`Saveable::make`: the case holds the generator")]
#[path = "../../tests/common/saveable.rs"]
mod saveable;
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};
use saveable::Saveable;

/// One generator of each type, as a fuzz case holds one.
#[derive(Debug, Arbitrary)]
enum Generator {
    TurboShake(TurboShakeRng),
    Shake(ShakeRng),
    ChaCha8(ChaChaKeyErasureRng),
    ChaCha12(ChaCha12KeyErasureRng),
    ChaCha20(ChaCha20KeyErasureRng),
    Aes(AesCtrPoolRng),
}

#[derive(Debug, Arbitrary)]
enum Op {
    U32,
    U64,
    /// `fill_bytes` of `len % 10_000` bytes: across every refill size.
    Fill(u16),
    /// Replace the generator by `restore(save())`.
    SaveRestore,
}

#[derive(Debug, Arbitrary)]
struct Case {
    generator: Generator,
    ops: Vec<Op>,
}

fn check<G: Saveable>(mut rng: G, ops: &[Op]) {
    let mut twin = G::restore(rng.save().as_ref()).expect("a saved state restores");
    let mut got = Vec::new();
    for op in ops {
        match op {
            Op::U32 => got.extend_from_slice(&rng.next_u32().to_le_bytes()),
            Op::U64 => got.extend_from_slice(&rng.next_u64().to_le_bytes()),
            Op::Fill(len) => {
                let start = got.len();
                got.resize(start + usize::from(*len) % 10_000, 0);
                rng.fill_bytes(&mut got[start..]);
            }
            Op::SaveRestore => rng = G::restore(rng.save().as_ref()).expect("restores"),
        }
    }
    let mut want = vec![0u8; got.len()];
    twin.fill_bytes(&mut want);
    assert!(got == want, "the stream differs");
}

fuzz_target!(|case: Case| match case.generator {
    Generator::TurboShake(rng) => check(rng, &case.ops),
    Generator::Shake(rng) => check(rng, &case.ops),
    Generator::ChaCha8(rng) => check(rng, &case.ops),
    Generator::ChaCha12(rng) => check(rng, &case.ops),
    Generator::ChaCha20(rng) => check(rng, &case.ops),
    Generator::Aes(rng) => check(rng, &case.ops),
});
