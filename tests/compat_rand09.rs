//! The `rand_core_09` feature: every generator through the `rand_core` 0.9 traits
//! (what `rand` 0.9 uses) gives the stream of the `rand_core` 0.10 traits, and
//! `rand` 0.9's distributions sample from it.
//!
//! - Streams: a fixed sequence of `fill_bytes` / `TryRngCore::try_fill_bytes` /
//!   `next_u32` / `next_u64` calls through the 0.9 traits, with splits across refill
//!   boundaries, reads the slices of one long 0.10 `fill_bytes`; `from_seed`,
//!   `seed_from_u64`, `from_rng` and `try_from_rng` give the 0.10 streams.
//! - Sampling: `Uniform`, `StandardUniform`, `Bernoulli`, `WeightedIndex`,
//!   `SliceRandom::shuffle`, `IndexedRandom::choose` from a fixed-seed generator. Two checks:
//!   1. the samples equal those drawn from `Replay`, a minimal 0.9 `RngCore`
//!      that serves the bytes of one long 0.10 fill (so the compat
//!      layer feeds `rand` exactly the 0.10 stream, whatever `rand` reads);
//!   2. they equal known answers. These were computed once by this test (the
//!      `Debug` string of [`Samples`], printed on failure) and checked equal to
//!      the `Replay` samples; they pin the stream (itself pinned by the golden
//!      tests) together with `rand` 0.9's sampling algorithms.
//!
//! The tests are written once, in `tests/common/compat.rs` (shared with
//! `compat_rand08.rs`); this file holds what is particular to `rand` 0.9.

#![cfg(feature = "rand_core_09")]

use crate::common::compat::Samples;
use crate::compat_tests;
use rand09::distr::weighted::WeightedIndex;
use rand09::distr::{Bernoulli, Distribution, StandardUniform, Uniform};
use rand09::seq::{IndexedRandom, SliceRandom};
use rand09::{CryptoRng, RngCore, SeedableRng, TryCryptoRng, TryRngCore};
use ratchet_rng::ChaCha20KeyErasureRng;

/// `rand_core` 0.9's fallible fill is `TryRngCore`'s, with an uninhabited error.
fn try_fill(rng: &mut impl RngCore, dest: &mut [u8]) {
    let Ok(()) = TryRngCore::try_fill_bytes(rng, dest);
}

/// `rand` 0.9's bounds for a cryptographic generator.
fn assert_crypto<R: CryptoRng + TryCryptoRng<Error = core::convert::Infallible>>(rng: &mut R) {
    let _: &mut dyn CryptoRng = rng;
}

/// `rand_core` 0.9 seeds from another generator with `from_rng` and with
/// `try_from_rng`.
#[allow(clippy::type_complexity)]
fn from_rng_ways<G: SeedableRng>() -> Vec<(&'static str, fn(&mut ChaCha20KeyErasureRng) -> G)> {
    vec![
        ("from_rng", |source| G::from_rng(source)),
        ("try_from_rng", |source| {
            let Ok(rng) = G::try_from_rng(source);
            rng
        }),
    ]
}

/// Samples each distribution from `rng`, through `rand` 0.9.
fn sample<R: RngCore>(rng: &mut R) -> Samples {
    use rand09::Rng;

    let die = Uniform::new_inclusive(1u32, 6).unwrap();
    let unit = Uniform::new(-1.0f64, 1.0).unwrap();
    let coin = Bernoulli::new(0.3).unwrap();
    let weights = WeightedIndex::new([1u32, 2, 3, 4]).unwrap();
    let mut deck: Vec<u8> = (0..10).collect();
    let letters = ['a', 'b', 'c', 'd', 'e'];
    Samples {
        uniform_u32: (0..8).map(|_| die.sample(rng)).collect(),
        uniform_f64: (0..3).map(|_| unit.sample(rng)).collect(),
        standard_u64: StandardUniform.sample(rng),
        standard_f32: StandardUniform.sample(rng),
        standard_bool: StandardUniform.sample(rng),
        bernoulli: (0..12).map(|_| coin.sample(rng)).collect(),
        weighted: (0..8).map(|_| weights.sample(rng)).collect(),
        shuffled: {
            deck.shuffle(rng);
            deck
        },
        chosen: (0..4).map(|_| *letters.choose(rng).unwrap()).collect(),
        range_i64: rng.random_range(-1_000_000_000_000i64..1_000_000_000_000),
    }
}

// Known answers: the samples where `rand` 0.9's algorithms differ from the other
// line's (`tests/common/compat.rs` pins the rest).
compat_tests! {
    shake: "shuffled: [2, 6, 5, 8, 9, 4, 7, 3, 0, 1], chosen: ['e', 'a', 'd', 'b'], range_i64: 889147405801 }",
    turboshake: "shuffled: [0, 9, 8, 1, 5, 6, 4, 7, 3, 2], chosen: ['c', 'd', 'b', 'd'], range_i64: -746843398374 }",
    chacha8: "shuffled: [8, 9, 1, 6, 2, 4, 0, 3, 5, 7], chosen: ['b', 'd', 'b', 'b'], range_i64: 523879135984 }",
    chacha12: "shuffled: [0, 1, 8, 5, 7, 2, 6, 3, 9, 4], chosen: ['a', 'b', 'a', 'e'], range_i64: -950771882665 }",
    chacha20: "shuffled: [2, 1, 4, 7, 8, 9, 5, 0, 6, 3], chosen: ['b', 'e', 'b', 'e'], range_i64: 701075196260 }",
    aes: "shuffled: [9, 5, 4, 0, 6, 2, 3, 1, 8, 7], chosen: ['a', 'e', 'd', 'd'], range_i64: -967641671221 }",
}
