//! The checks of the `rand` 0.8 / 0.9 compatibility tests (`compat_rand08.rs`,
//! `compat_rand09.rs`), written once.
//!
//! [`compat_tests!`](crate::compat_tests) generates every test; each test file
//! invokes it with its known answers and supplies what really differs between
//! the two `rand` lines (listed on the macro). The helpers here are shared
//! as plain code.

/// A seed with a fixed pattern, of any seed type.
pub fn pattern_seed<S: Default + AsMut<[u8]>>(tweak: u8) -> S {
    let mut seed = S::default();
    for (i, b) in seed.as_mut().iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(7).wrapping_add(tweak);
    }
    seed
}

#[derive(Clone, Copy, Debug)]
pub enum Op {
    Fill(usize),
    TryFill(usize),
    U32,
    U64,
}

/// Calls crossing the refill boundaries of a generator that refills `refill`
/// bytes at a time: unaligned reads, lengths around one refill, a multi-refill
/// fill, and words read across a boundary.
pub fn ops(refill: usize) -> Vec<Op> {
    use Op::*;
    vec![
        Fill(0),
        Fill(1),
        U32,
        Fill(3),
        U64,
        TryFill(refill - 1),
        U32,
        Fill(refill + 1),
        U64,
        U64,
        TryFill(0),
        Fill(2 * refill + 7),
        U32,
        Fill(refill - 9),
        U64,
        Fill(5),
    ]
}

/// A minimal `RngCore` of both older `rand_core` lines that serves given bytes
/// in order (words are little-endian reads): the stream definition, with
/// nothing of the crate in it.
pub struct Replay {
    bytes: Vec<u8>,
    pos: usize,
}

impl Replay {
    pub fn new(bytes: Vec<u8>) -> Self {
        Replay { bytes, pos: 0 }
    }

    fn take(&mut self, n: usize) -> &[u8] {
        let start = self.pos;
        self.pos += n;
        assert!(self.pos <= self.bytes.len(), "Replay ran out of bytes");
        &self.bytes[start..self.pos]
    }
}

/// `RngCore` of one `rand` line for [`Replay`]; `$extra`: the methods only that
/// line has.
macro_rules! impl_replay_rng_core {
    ($rand:ident $(, $extra:item)*) => {
        impl $rand::RngCore for Replay {
            fn next_u32(&mut self) -> u32 {
                u32::from_le_bytes(self.take(4).try_into().unwrap())
            }

            fn next_u64(&mut self) -> u64 {
                u64::from_le_bytes(self.take(8).try_into().unwrap())
            }

            fn fill_bytes(&mut self, dest: &mut [u8]) {
                dest.copy_from_slice(self.take(dest.len()));
            }

            $($extra)*
        }
    };
}

// rand_core 0.6 has a fallible fill on `RngCore` itself (0.9 moved it to a
// blanket `TryRngCore`).
impl_replay_rng_core!(
    rand08,
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand08::Error> {
        rand08::RngCore::fill_bytes(self, dest);
        Ok(())
    }
);
impl_replay_rng_core!(rand09);

/// Bytes a [`Replay`] holds: more than a test's `sample` can use.
pub const REPLAY_BYTES: usize = 16 * 1024;

/// What a test file's `sample` draws, in order. `range_i64` is `gen_range` in
/// `rand` 0.8, `random_range` in 0.9.
#[allow(dead_code)] // read through `Debug`
#[derive(Debug, PartialEq)]
pub struct Samples {
    pub uniform_u32: Vec<u32>,
    pub uniform_f64: Vec<f64>,
    pub standard_u64: u64,
    pub standard_f32: f32,
    pub standard_bool: bool,
    pub bernoulli: Vec<bool>,
    pub weighted: Vec<usize>,
    pub shuffled: Vec<u8>,
    pub chosen: Vec<char>,
    pub range_i64: i64,
}

/// The compat tests, for the `rand` line the invoking test file uses.
///
/// The invoking file imports that line's `RngCore`, `CryptoRng` and
/// `SeedableRng`, and defines what differs between the lines:
/// - `fn try_fill(rng: &mut impl RngCore, dest: &mut [u8])`: the infallible
///   `try_fill_bytes` (on `RngCore` in 0.6, `TryRngCore` in 0.9);
/// - `fn assert_crypto<R>(rng: &mut R)`: bounded by every crypto trait of the
///   line (the test is that the call compiles);
/// - `fn from_rng_ways<G: SeedableRng>() -> Vec<(&str, fn(&mut ChaCha20KeyErasureRng) -> G)>`:
///   the line's constructors that seed from another generator;
/// - `fn sample<R: RngCore>(rng: &mut R) -> Samples`: the line's distributions.
///
/// It passes, per generator, the end of the known [`Samples`]: `shuffled`,
/// `chosen` and `range_i64`, where the two lines' algorithms differ. The
/// samples before them are the same in `rand` 0.8 and 0.9 (same algorithms,
/// same stream), so they are pinned once, here (`draws`).
///
/// Known answers: computed once by the tests (the `Debug` string of
/// [`Samples`], printed on failure) and checked equal to the samples drawn from
/// [`Replay`]; they pin the stream (itself pinned by the golden tests) together
/// with the `rand` line's sampling algorithms.
#[macro_export]
macro_rules! compat_tests {
    (
        shake: $shake:literal,
        turboshake: $turboshake:literal,
        chacha8: $chacha8:literal,
        chacha12: $chacha12:literal,
        chacha20: $chacha20:literal,
        aes: $aes:literal $(,)?
    ) => {
        /// Runs `ops` through the older traits and checks each result against
        /// the next bytes of `reference` (read through the 0.10 traits).
        fn check_ops<R, S>(rng: &mut R, reference: &mut S, ops: &[$crate::common::compat::Op])
        where
            R: RngCore,
            S: ratchet_rng::rand_core::Rng,
        {
            use $crate::common::compat::Op;
            use $crate::common::one_fill as fill_010;
            for (i, &op) in ops.iter().enumerate() {
                match op {
                    Op::Fill(len) => {
                        let mut got = vec![0u8; len];
                        rng.fill_bytes(&mut got);
                        assert_eq!(got, fill_010(reference, len), "op {i}: {op:?}");
                    }
                    Op::TryFill(len) => {
                        let mut got = vec![0u8; len];
                        try_fill(rng, &mut got);
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

        $crate::compat_tests!(
            @generator shake, ratchet_rng::ShakeRng, refill = 1088,
            draws = "Samples { uniform_u32: [4, 2, 1, 2, 5, 5, 2, 3], \
                uniform_f64: [0.07180586228718555, 0.46983615284153, 0.7457454794399272], \
                standard_u64: 14205220195425184588, \
                standard_f32: 0.40382737, \
                standard_bool: false, \
                bernoulli: [true, false, false, true, false, false, false, false, true, false, false, false], \
                weighted: [2, 2, 3, 3, 1, 1, 1, 2], ",
            seq = $shake
        );
        $crate::compat_tests!(
            @generator turboshake, ratchet_rng::TurboShakeRng, refill = 1088,
            draws = "Samples { uniform_u32: [4, 3, 6, 6, 5, 6, 1, 1], \
                uniform_f64: [0.7188356169553161, -0.6789481585080472, -0.45401035972584536], \
                standard_u64: 3851811772928681400, \
                standard_f32: 0.08989835, \
                standard_bool: true, \
                bernoulli: [false, false, true, true, false, false, true, false, false, false, false, false], \
                weighted: [3, 2, 1, 2, 3, 1, 2, 3], ",
            seq = $turboshake
        );
        $crate::compat_tests!(
            @generator chacha8, ratchet_rng::ChaChaKeyErasureRng, refill = 992,
            draws = "Samples { uniform_u32: [5, 6, 1, 2, 4, 4, 5, 3], \
                uniform_f64: [0.8839615115999591, -0.7822399688519175, -0.10965223743539854], \
                standard_u64: 12938078347598102727, \
                standard_f32: 0.95628536, \
                standard_bool: true, \
                bernoulli: [false, true, true, true, false, false, false, false, false, true, true, true], \
                weighted: [2, 2, 3, 2, 2, 3, 2, 3], ",
            seq = $chacha8
        );
        $crate::compat_tests!(
            @generator chacha12, ratchet_rng::ChaCha12KeyErasureRng, refill = 992,
            draws = "Samples { uniform_u32: [6, 4, 4, 3, 6, 2, 3, 3], \
                uniform_f64: [0.9442982434491438, -0.3513421988736609, 0.6302218034455938], \
                standard_u64: 14504646431890071483, \
                standard_f32: 0.6935203, \
                standard_bool: true, \
                bernoulli: [false, false, false, false, true, true, false, true, false, false, false, true], \
                weighted: [2, 3, 2, 0, 3, 3, 1, 1], ",
            seq = $chacha12
        );
        $crate::compat_tests!(
            @generator chacha20, ratchet_rng::ChaCha20KeyErasureRng, refill = 992,
            draws = "Samples { uniform_u32: [2, 1, 2, 5, 6, 5, 1, 1], \
                uniform_f64: [0.2545932943731444, -0.23924967164881084, 0.18459733991883143], \
                standard_u64: 9016075414257858349, \
                standard_f32: 0.476556, \
                standard_bool: true, \
                bernoulli: [false, false, false, true, false, false, false, false, false, false, true, false], \
                weighted: [2, 3, 1, 2, 2, 1, 1, 2], ",
            seq = $chacha20
        );
        $crate::compat_tests!(
            @generator aes, ratchet_rng::AesCtrPoolRng, refill = 4064,
            draws = "Samples { uniform_u32: [5, 1, 5, 5, 1, 1, 3, 1], \
                uniform_f64: [0.6197444711384237, -0.5134586098492582, -0.3494852314486936], \
                standard_u64: 1775898851138538698, \
                standard_f32: 0.15919381, \
                standard_bool: false, \
                bernoulli: [false, false, false, true, false, true, false, false, false, false, false, false], \
                weighted: [0, 1, 3, 2, 3, 2, 3, 2], ",
            seq = $aes
        );

        /// The thread-local handle through the older traits (its output is
        /// OS-seeded, so only properties are checked).
        #[cfg(feature = "thread_rng")]
        mod thread_rng {
            use super::*;

            #[test]
            fn drives_this_rand() {
                let mut rng = ratchet_rng::rng();
                assert_crypto(&mut rng);
                // `sample` covers the line's `gen_range` / `random_range`.
                let samples = sample(&mut rng);
                assert!(samples.uniform_u32.iter().all(|roll| (1..=6).contains(roll)));
                assert!(samples.uniform_f64.iter().all(|x| (-1.0..1.0).contains(x)));
                assert!((-1_000_000_000_000..1_000_000_000_000).contains(&samples.range_i64));
                let mut sorted = samples.shuffled;
                sorted.sort_unstable();
                assert_eq!(sorted, (0..10).collect::<Vec<_>>());
                let mut deck: Vec<u32> = (0..52).collect();
                deck.shuffle(&mut rng);
                deck.sort_unstable();
                assert_eq!(deck, (0..52).collect::<Vec<_>>());
                let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
                rng.fill_bytes(&mut a);
                try_fill(&mut rng, &mut b);
                assert_ne!(a, b);
                assert_ne!(RngCore::next_u64(&mut rng), RngCore::next_u64(&mut rng));
            }
        }
    };

    // One generator's tests, in a module named after it.
    (
        @generator $mod:ident, $rng:ty, refill = $refill:expr,
        draws = $draws:literal,
        seq = $seq:literal
    ) => {
    mod $mod {
        use super::*;
        use $crate::common::compat::{Replay, REPLAY_BYTES, ops, pattern_seed};
        use $crate::common::one_fill as fill_010;
        use ratchet_rng::ChaCha20KeyErasureRng;
        use ratchet_rng::rand_core::SeedableRng as SeedableRng010;

        #[test]
        fn stream_through_the_older_traits_equals_rand_core_010() {
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
            for (way, from_rng) in from_rng_ways::<$rng>() {
                let mut rng = from_rng(&mut source);
                let mut reference = <$rng as SeedableRng010>::from_rng(&mut source010);
                let mut got = vec![0u8; 100];
                rng.fill_bytes(&mut got);
                assert_eq!(got, fill_010(&mut reference, 100), "{way}");
            }
            // ...and both sources were advanced by the same seed lengths.
            assert_eq!(
                source.next_u64(),
                ratchet_rng::rand_core::Rng::next_u64(&mut source010)
            );
        }

        #[test]
        fn is_a_crypto_rng_for_this_rand() {
            let mut rng = <$rng as SeedableRng>::seed_from_u64(0);
            assert_crypto(&mut rng);
        }

        #[test]
        fn this_rand_samples_the_rand_core_010_stream() {
            let mut rng = <$rng as SeedableRng>::from_seed(pattern_seed(3));
            let mut reference = <$rng as SeedableRng010>::from_seed(pattern_seed(3));
            let mut replay = Replay::new(fill_010(&mut reference, REPLAY_BYTES));
            let samples = sample(&mut rng);
            assert_eq!(samples, sample(&mut replay));
            assert_eq!(format!("{samples:?}"), concat!($draws, $seq));
        }
    }
    };
}
