//! The `rand_core_06` feature: every generator through the `rand_core` 0.6 traits
//! (what `rand` 0.8 uses) gives the stream of the `rand_core` 0.10 traits, and
//! `rand` 0.8's distributions sample from it.
//!
//! - Streams: a fixed sequence of `fill_bytes` / `try_fill_bytes` / `next_u32` /
//!   `next_u64` calls through the 0.6 traits, with splits across refill
//!   boundaries, reads the slices of one long 0.10 `fill_bytes`; `from_seed`,
//!   `seed_from_u64` and `from_rng` give the 0.10 streams.
//! - Sampling: `Uniform`, `Standard`, `Bernoulli`, `WeightedIndex`,
//!   `SliceRandom::{shuffle, choose}` from a fixed-seed generator. Two checks:
//!   1. the samples equal those drawn from `Replay`, a minimal 0.6 `RngCore`
//!      that serves the bytes of one long 0.10 fill (so the compat
//!      layer feeds `rand` exactly the 0.10 stream, whatever `rand` reads);
//!   2. they equal known answers. These were computed once by this test (the
//!      `Debug` string of [`Samples`], printed on failure) and checked equal to
//!      the `Replay` samples; they pin the stream (itself pinned by the golden
//!      tests) together with `rand` 0.8's sampling algorithms.
//!
//! The tests are written once, in `tests/common/compat.rs` (shared with
//! `compat_rand09.rs`); this file holds what is particular to `rand` 0.8.

#![cfg(feature = "rand_core_06")]

use crate::common::compat::Samples;
use crate::compat_tests;
use rand08::distributions::{Bernoulli, Distribution, Standard, Uniform, WeightedIndex};
use rand08::seq::SliceRandom;
use rand08::{CryptoRng, RngCore, SeedableRng};
use ratchet_rng::ChaCha20KeyErasureRng;

/// `rand_core` 0.6's fallible fill is on `RngCore`; the generators never fail.
fn try_fill(rng: &mut impl RngCore, dest: &mut [u8]) {
    rng.try_fill_bytes(dest).expect("infallible");
}

/// `rand` 0.8's bounds for a cryptographic generator.
fn assert_crypto<R: CryptoRng + RngCore>(rng: &mut R) {
    let _: &mut dyn rand_core_06::CryptoRngCore = rng;
}

/// `rand_core` 0.6 seeds from another generator with a fallible `from_rng`.
#[allow(clippy::type_complexity)]
fn from_rng_ways<G: SeedableRng>() -> Vec<(&'static str, fn(&mut ChaCha20KeyErasureRng) -> G)> {
    vec![("from_rng", |source| G::from_rng(source).unwrap())]
}

/// Samples each distribution from `rng`, through `rand` 0.8.
fn sample<R: RngCore>(rng: &mut R) -> Samples {
    use rand08::Rng;

    let die = Uniform::new_inclusive(1u32, 6);
    let unit = Uniform::new(-1.0f64, 1.0);
    let coin = Bernoulli::new(0.3).unwrap();
    let weights = WeightedIndex::new([1u32, 2, 3, 4]).unwrap();
    let mut deck: Vec<u8> = (0..10).collect();
    let letters = ['a', 'b', 'c', 'd', 'e'];
    Samples {
        uniform_u32: (0..8).map(|_| die.sample(rng)).collect(),
        uniform_f64: (0..3).map(|_| unit.sample(rng)).collect(),
        standard_u64: Standard.sample(rng),
        standard_f32: Standard.sample(rng),
        standard_bool: Standard.sample(rng),
        bernoulli: (0..12).map(|_| coin.sample(rng)).collect(),
        weighted: (0..8).map(|_| weights.sample(rng)).collect(),
        shuffled: {
            deck.shuffle(rng);
            deck
        },
        chosen: (0..4).map(|_| *letters.choose(rng).unwrap()).collect(),
        range_i64: rng.gen_range(-1_000_000_000_000i64..1_000_000_000_000),
    }
}

// Known answers: the samples where `rand` 0.8's algorithms differ from the other
// line's (`tests/common/compat.rs` pins the rest).
compat_tests! {
    shake: "shuffled: [3, 9, 7, 0, 2, 5, 1, 4, 6, 8], chosen: ['e', 'd', 'b', 'd'], range_i64: -912044208142 }",
    turboshake: "shuffled: [0, 5, 6, 9, 8, 7, 2, 1, 3, 4], chosen: ['d', 'a', 'a', 'c'], range_i64: -36615849189 }",
    chacha8: "shuffled: [8, 1, 9, 7, 5, 4, 0, 3, 6, 2], chosen: ['e', 'e', 'e', 'b'], range_i64: 553772533686 }",
    chacha12: "shuffled: [5, 4, 3, 1, 2, 7, 8, 6, 0, 9], chosen: ['b', 'd', 'a', 'e'], range_i64: -165583961970 }",
    chacha20: "shuffled: [9, 7, 4, 6, 5, 0, 2, 1, 3, 8], chosen: ['a', 'a', 'd', 'd'], range_i64: 241334645619 }",
    aes: "shuffled: [2, 3, 6, 8, 0, 7, 4, 5, 1, 9], chosen: ['d', 'd', 'b', 'b'], range_i64: 895371185460 }",
}
