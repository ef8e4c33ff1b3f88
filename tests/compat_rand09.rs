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
//!      written here that serves the bytes of one long 0.10 fill (so the compat
//!      layer feeds `rand` exactly the 0.10 stream, whatever `rand` reads);
//!   2. they equal known answers. These were computed once by this test (the
//!      `Debug` string of [`Samples`], printed on failure) and checked equal to
//!      the `Replay` samples; they pin the stream (itself pinned by the golden
//!      tests) together with `rand` 0.9's sampling algorithms.

mod common;

use common::{Op, fill_010, ops, pattern_seed};
use rand09::distr::weighted::WeightedIndex;
use rand09::distr::{Bernoulli, Distribution, StandardUniform, Uniform};
use rand09::seq::{IndexedRandom, SliceRandom};
use rand09::{CryptoRng, RngCore, SeedableRng, TryCryptoRng, TryRngCore};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

/// Runs `ops` through the 0.9 traits and checks each result against the next
/// bytes of `reference` (read through the 0.10 traits).
fn check_ops<R, S>(rng: &mut R, reference: &mut S, ops: &[Op])
where
    R: RngCore,
    S: ratchet_rng::rand_core::Rng,
{
    for (i, &op) in ops.iter().enumerate() {
        match op {
            Op::Fill(len) => {
                let mut got = vec![0u8; len];
                rng.fill_bytes(&mut got);
                assert_eq!(got, fill_010(reference, len), "op {i}: {op:?}");
            }
            Op::TryFill(len) => {
                let mut got = vec![0u8; len];
                let Ok(()) = TryRngCore::try_fill_bytes(rng, &mut got);
                assert_eq!(got, fill_010(reference, len), "op {i}: {op:?}");
            }
            Op::U32 => {
                let want = u32::from_le_bytes(fill_010(reference, 4).try_into().unwrap());
                assert_eq!(rng.next_u32(), want, "op {i}: {op:?}");
            }
            Op::U64 => {
                let want = u64::from_le_bytes(fill_010(reference, 8).try_into().unwrap());
                assert_eq!(rng.next_u64(), want, "op {i}: {op:?}");
            }
        }
    }
}

/// A `rand_core` 0.9 `RngCore` that serves given bytes in order (words are
/// little-endian reads): the stream definition, with nothing of the crate in it.
struct Replay {
    bytes: Vec<u8>,
    pos: usize,
}

impl Replay {
    fn take(&mut self, n: usize) -> &[u8] {
        let start = self.pos;
        self.pos += n;
        assert!(self.pos <= self.bytes.len(), "Replay ran out of bytes");
        &self.bytes[start..self.pos]
    }
}

impl RngCore for Replay {
    fn next_u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }

    fn next_u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap())
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        dest.copy_from_slice(self.take(dest.len()));
    }
}

/// What [`sample`] draws, in order.
#[allow(dead_code)] // read through `Debug`
#[derive(Debug, PartialEq)]
struct Samples {
    uniform_u32: Vec<u32>,
    uniform_f64: Vec<f64>,
    standard_u64: u64,
    standard_f32: f32,
    standard_bool: bool,
    bernoulli: Vec<bool>,
    weighted: Vec<usize>,
    shuffled: Vec<u8>,
    chosen: Vec<char>,
    random_range_i64: i64,
}

/// Samples each distribution from `rng`.
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
        random_range_i64: rng.random_range(-1_000_000_000_000i64..1_000_000_000_000),
    }
}

/// Bytes a [`Replay`] holds: more than [`sample`] can use.
const REPLAY_BYTES: usize = 16 * 1024;

macro_rules! compat_tests {
    ($mod:ident, $rng:ty, refill = $refill:expr, samples = $known:expr) => {
        mod $mod {
            use super::*;
            use ratchet_rng::rand_core::SeedableRng as SeedableRng010;

            #[test]
            fn stream_through_rand_core_09_equals_rand_core_010() {
                for tweak in [0u8, 1, 0xA5] {
                    let mut rng = <$rng as SeedableRng>::from_seed(pattern_seed(tweak));
                    let mut reference = <$rng as SeedableRng010>::from_seed(pattern_seed(tweak));
                    check_ops(&mut rng, &mut reference, &ops($refill));
                }
            }

            #[test]
            fn seed_from_u64_gives_the_rand_core_010_stream() {
                for state in [0u64, 1, 42, u64::MAX] {
                    let mut rng = <$rng as SeedableRng>::seed_from_u64(state);
                    let mut reference = <$rng as SeedableRng010>::seed_from_u64(state);
                    let mut got = vec![0u8; 2 * $refill + 3];
                    rng.fill_bytes(&mut got);
                    assert_eq!(got, fill_010(&mut reference, got.len()), "state {state}");
                }
            }

            #[test]
            fn from_rng_takes_the_seed_as_rand_core_010_does() {
                // Two identical sources, one read through each trait version.
                let mut source = <ChaCha20KeyErasureRng as SeedableRng>::seed_from_u64(9);
                let mut source010 = <ChaCha20KeyErasureRng as SeedableRng010>::seed_from_u64(9);
                let mut rng = <$rng as SeedableRng>::from_rng(&mut source);
                let mut reference = <$rng as SeedableRng010>::from_rng(&mut source010);
                let mut got = vec![0u8; 100];
                rng.fill_bytes(&mut got);
                assert_eq!(got, fill_010(&mut reference, 100));
                let Ok(mut rng) = <$rng as SeedableRng>::try_from_rng(&mut source);
                let mut reference = <$rng as SeedableRng010>::from_rng(&mut source010);
                rng.fill_bytes(&mut got);
                assert_eq!(got, fill_010(&mut reference, 100));
                // ...and both sources were advanced by the same seed length.
                assert_eq!(
                    source.next_u64(),
                    ratchet_rng::rand_core::Rng::next_u64(&mut source010)
                );
            }

            #[test]
            fn is_a_crypto_rng_for_rand_09() {
                fn crypto<R: CryptoRng>(_: &R) {}
                fn try_crypto<R: TryCryptoRng<Error = core::convert::Infallible>>(_: &R) {}
                fn crypto_dyn(_: &mut dyn CryptoRng) {}
                let mut rng = <$rng as SeedableRng>::seed_from_u64(0);
                crypto(&rng);
                try_crypto(&rng);
                crypto_dyn(&mut rng);
            }

            #[test]
            fn rand_09_samples_the_rand_core_010_stream() {
                let mut rng = <$rng as SeedableRng>::from_seed(pattern_seed(3));
                let mut reference = <$rng as SeedableRng010>::from_seed(pattern_seed(3));
                let mut replay = Replay {
                    bytes: fill_010(&mut reference, REPLAY_BYTES),
                    pos: 0,
                };
                let samples = sample(&mut rng);
                assert_eq!(samples, sample(&mut replay));
                assert_eq!(format!("{samples:?}"), $known);
            }
        }
    };
}

compat_tests!(
    shake,
    ShakeRng,
    refill = 1088,
    samples = "Samples { uniform_u32: [4, 2, 1, 2, 5, 5, 2, 3], \
         uniform_f64: [0.07180586228718555, 0.46983615284153, 0.7457454794399272], \
         standard_u64: 14205220195425184588, \
         standard_f32: 0.40382737, \
         standard_bool: false, \
         bernoulli: [true, false, false, true, false, false, false, false, true, false, false, false], \
         weighted: [2, 2, 3, 3, 1, 1, 1, 2], \
         shuffled: [2, 6, 5, 8, 9, 4, 7, 3, 0, 1], \
         chosen: ['e', 'a', 'd', 'b'], \
         random_range_i64: 889147405801 }"
);
compat_tests!(
    turboshake,
    TurboShakeRng,
    refill = 1088,
    samples = "Samples { uniform_u32: [4, 3, 6, 6, 5, 6, 1, 1], \
         uniform_f64: [0.7188356169553161, -0.6789481585080472, -0.45401035972584536], \
         standard_u64: 3851811772928681400, \
         standard_f32: 0.08989835, \
         standard_bool: true, \
         bernoulli: [false, false, true, true, false, false, true, false, false, false, false, false], \
         weighted: [3, 2, 1, 2, 3, 1, 2, 3], \
         shuffled: [0, 9, 8, 1, 5, 6, 4, 7, 3, 2], \
         chosen: ['c', 'd', 'b', 'd'], \
         random_range_i64: -746843398374 }"
);
compat_tests!(
    chacha8,
    ChaChaKeyErasureRng,
    refill = 992,
    samples = "Samples { uniform_u32: [5, 6, 1, 2, 4, 4, 5, 3], \
         uniform_f64: [0.8839615115999591, -0.7822399688519175, -0.10965223743539854], \
         standard_u64: 12938078347598102727, \
         standard_f32: 0.95628536, \
         standard_bool: true, \
         bernoulli: [false, true, true, true, false, false, false, false, false, true, true, true], \
         weighted: [2, 2, 3, 2, 2, 3, 2, 3], \
         shuffled: [8, 9, 1, 6, 2, 4, 0, 3, 5, 7], \
         chosen: ['b', 'd', 'b', 'b'], \
         random_range_i64: 523879135984 }"
);
compat_tests!(
    chacha12,
    ChaCha12KeyErasureRng,
    refill = 992,
    samples = "Samples { uniform_u32: [6, 4, 4, 3, 6, 2, 3, 3], \
         uniform_f64: [0.9442982434491438, -0.3513421988736609, 0.6302218034455938], \
         standard_u64: 14504646431890071483, \
         standard_f32: 0.6935203, \
         standard_bool: true, \
         bernoulli: [false, false, false, false, true, true, false, true, false, false, false, true], \
         weighted: [2, 3, 2, 0, 3, 3, 1, 1], \
         shuffled: [0, 1, 8, 5, 7, 2, 6, 3, 9, 4], \
         chosen: ['a', 'b', 'a', 'e'], \
         random_range_i64: -950771882665 }"
);
compat_tests!(
    chacha20,
    ChaCha20KeyErasureRng,
    refill = 992,
    samples = "Samples { uniform_u32: [2, 1, 2, 5, 6, 5, 1, 1], \
         uniform_f64: [0.2545932943731444, -0.23924967164881084, 0.18459733991883143], \
         standard_u64: 9016075414257858349, \
         standard_f32: 0.476556, \
         standard_bool: true, \
         bernoulli: [false, false, false, true, false, false, false, false, false, false, true, false], \
         weighted: [2, 3, 1, 2, 2, 1, 1, 2], \
         shuffled: [2, 1, 4, 7, 8, 9, 5, 0, 6, 3], \
         chosen: ['b', 'e', 'b', 'e'], \
         random_range_i64: 701075196260 }"
);
compat_tests!(
    aes,
    AesCtrPoolRng,
    refill = 4064,
    samples = "Samples { uniform_u32: [5, 1, 5, 5, 1, 1, 3, 1], \
         uniform_f64: [0.6197444711384237, -0.5134586098492582, -0.3494852314486936], \
         standard_u64: 1775898851138538698, \
         standard_f32: 0.15919381, \
         standard_bool: false, \
         bernoulli: [false, false, false, true, false, true, false, false, false, false, false, false], \
         weighted: [0, 1, 3, 2, 3, 2, 3, 2], \
         shuffled: [9, 5, 4, 0, 6, 2, 3, 1, 8, 7], \
         chosen: ['a', 'e', 'd', 'd'], \
         random_range_i64: -967641671221 }"
);

/// The thread-local handle through the 0.9 traits (its output is OS-seeded, so
/// only properties are checked).
#[cfg(feature = "thread_rng")]
mod thread_rng {
    use super::*;
    use rand09::Rng;

    #[test]
    fn drives_rand_09() {
        fn crypto<R: CryptoRng>(_: &R) {}
        let mut rng = ratchet_rng::rng();
        crypto(&rng);
        let roll = rng.random_range(1..=6);
        assert!((1..=6).contains(&roll));
        let mut deck: Vec<u32> = (0..52).collect();
        deck.shuffle(&mut rng);
        let mut sorted = deck.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..52).collect::<Vec<_>>());
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        rng.fill_bytes(&mut a);
        rng.try_fill_bytes(&mut b)
            .expect("the OS seeds this thread");
        assert_ne!(a, b);
        assert_ne!(RngCore::next_u64(&mut rng), RngCore::next_u64(&mut rng));
    }
}
