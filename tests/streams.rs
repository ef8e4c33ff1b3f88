//! The properties every generator shares, run on each one through one macro:
//!
//! - byte-stream semantics: any sequence of `fill_bytes` / `next_u32` /
//!   `next_u64` reads slices of one long `fill_bytes` (proptest), with lengths
//!   around each generator's refill size so the buffered path, the direct
//!   whole-refill path and refill boundaries are all crossed;
//! - zero-length requests change nothing;
//! - the seeding constructors (`seed_from_u64`, `from_rng`, `try_from_rng`,
//!   `from_os_rng`, `try_from_os_rng`, `from_key`) are deterministic where they
//!   should be and distinct where they should be;
//! - hygiene visible from outside: `Debug` prints no state, no `Clone`;
//! - the generators drive `rand` 0.10 as `CryptoRng`s.

use crate::common;

use common::{one_fill, proptest_config};
use proptest::prelude::*;
use rand::RngExt;
use ratchet_rng::rand_core::{CryptoRng, Rng, SeedableRng, TryRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

/// A `SeedableRng` that only keeps its seed: its `seed_from_u64` and `from_rng`
/// are rand_core's defaults, the reference for the generators' overrides.
struct SeedProbe<S>(S);

impl<S: Clone + Default + AsMut<[u8]> + AsRef<[u8]>> SeedableRng for SeedProbe<S> {
    type Seed = S;

    fn from_seed(seed: S) -> Self {
        Self(seed)
    }
}

#[derive(Clone, Debug)]
enum Op {
    Fill(usize),
    U32,
    U64,
}

/// Operations with fill lengths around `refill` (the generator's bytes per
/// refill) and several refills.
fn op(refill: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        (0usize..3 * refill).prop_map(Op::Fill),
        prop::sample::select(vec![
            0,
            1,
            7,
            refill - 1,
            refill,
            refill + 1,
            2 * refill,
            2 * refill + 3,
            5 * refill + 1,
        ])
        .prop_map(Op::Fill),
        Just(Op::U32),
        Just(Op::U64),
    ]
}

/// Runs `ops`, concatenating what each returns as little-endian bytes.
fn run_ops<R: Rng>(rng: &mut R, ops: &[Op]) -> Vec<u8> {
    let mut out = Vec::new();
    for op in ops {
        match *op {
            Op::Fill(n) => {
                let mut buf = vec![0u8; n];
                rng.fill_bytes(&mut buf);
                out.extend_from_slice(&buf);
            }
            Op::U32 => out.extend_from_slice(&rng.next_u32().to_le_bytes()),
            Op::U64 => out.extend_from_slice(&rng.next_u64().to_le_bytes()),
        }
    }
    out
}

/// Compiles only when `T` is not `Clone` (with `Clone` the call is ambiguous).
trait NotClone<A> {
    fn not_clone() {}
}
impl<T> NotClone<()> for T {}
struct IsClone;
impl<T: Clone> NotClone<IsClone> for T {}

macro_rules! generator_tests {
    ($module:ident, $rng:ty, $refill:expr) => {
        mod $module {
            use super::*;

            proptest! {
                #![proptest_config(proptest_config(128))]

                #[test]
                fn op_sequences_read_one_stream(
                    key in proptest::collection::vec(any::<u8>(), 0..200),
                    ops in proptest::collection::vec(op($refill), 0..20),
                ) {
                    let got = run_ops(&mut <$rng>::from_key(&key), &ops);
                    let want = one_fill(&mut <$rng>::from_key(&key), got.len());
                    prop_assert_eq!(got, want);
                }
            }

            #[test]
            fn zero_length_requests_change_nothing() {
                let mut a = <$rng>::from_key(b"k");
                let mut b = <$rng>::from_key(b"k");
                a.fill_bytes(&mut []);
                a.try_fill_bytes(&mut []).unwrap();
                let _ = a.next_u32();
                a.fill_bytes(&mut []);
                let _ = b.next_u32();
                assert_eq!(a.next_u64(), b.next_u64());
            }

            /// `seed_from_u64`, `from_rng` and `try_from_rng` are overridden (to
            /// wipe their temporary seed): they must still give exactly the seeds
            /// of rand_core's defaults, which a probe type that keeps the seed
            /// shows.
            #[test]
            fn seeding_equals_rand_cores_defaults() {
                type Seed = <$rng as SeedableRng>::Seed;
                for state in [0, 1, 2024, u64::MAX] {
                    let seed = SeedProbe::<Seed>::seed_from_u64(state).0;
                    assert_eq!(
                        one_fill(&mut <$rng>::seed_from_u64(state), 64),
                        one_fill(&mut <$rng>::from_seed(seed), 64),
                        "seed_from_u64({state})"
                    );
                }
                let mut source = ShakeRng::from_key(b"source");
                let seed = SeedProbe::<Seed>::from_rng(&mut ShakeRng::from_key(b"source")).0;
                assert_eq!(
                    one_fill(&mut <$rng>::from_rng(&mut source), 64),
                    one_fill(&mut <$rng>::from_seed(seed.clone()), 64)
                );
                let Ok(mut tried) = <$rng>::try_from_rng(&mut ShakeRng::from_key(b"source"));
                assert_eq!(
                    one_fill(&mut tried, 64),
                    one_fill(&mut <$rng>::from_seed(seed), 64)
                );
            }

            #[test]
            fn seeding_constructors() {
                let first = |mut r: $rng| r.next_u64();
                assert_eq!(
                    first(<$rng>::seed_from_u64(42)),
                    first(<$rng>::seed_from_u64(42))
                );
                assert_ne!(
                    first(<$rng>::seed_from_u64(42)),
                    first(<$rng>::seed_from_u64(43))
                );
                // from_rng / try_from_rng read a seed's worth of the parent's stream.
                let mut seed = <$rng as SeedableRng>::Seed::default();
                ShakeRng::from_key(b"parent").fill_bytes(seed.as_mut());
                let want = first(<$rng>::from_seed(seed.clone()));
                assert_eq!(
                    first(<$rng>::from_rng(&mut ShakeRng::from_key(b"parent"))),
                    want
                );
                let child = <$rng>::try_from_rng(&mut ShakeRng::from_key(b"parent")).unwrap();
                assert_eq!(first(child), want);
                // from_key: deterministic, distinct keys give distinct streams, the
                // empty key is a valid (public) stream.
                assert_eq!(first(<$rng>::from_key(b"")), first(<$rng>::from_key(b"")));
                assert_ne!(first(<$rng>::from_key(b"")), first(<$rng>::from_key(b"\0")));
                // OS seeding (feature `sys_rng`).
                #[cfg(feature = "sys_rng")]
                {
                    let mut a = <$rng>::from_os_rng();
                    let mut b = <$rng>::try_from_os_rng().expect("OS RNG");
                    assert_ne!(one_fill(&mut a, 32), one_fill(&mut b, 32));
                }
            }

            #[test]
            fn debug_prints_no_state_and_not_clone() {
                let rng = <$rng>::from_key(b"secret");
                let name = stringify!($rng);
                assert_eq!(format!("{rng:?}"), format!("{name} {{ .. }}"));
                assert_eq!(format!("{rng:#?}"), format!("{name} {{ .. }}"));
                <$rng as NotClone<_>>::not_clone();
            }

            #[test]
            fn drives_rand_as_a_crypto_rng() {
                fn assert_crypto<R: CryptoRng>(_: &R) {}
                let mut rng = <$rng>::from_key(b"rand");
                assert_crypto(&rng);
                let dice: Vec<u32> = (0..16).map(|_| rng.random_range(1..=6)).collect();
                assert!(dice.iter().all(|d| (1..=6).contains(d)));
                let x: f64 = rng.random();
                assert!((0.0..1.0).contains(&x));
                let mut again = <$rng>::from_key(b"rand");
                let dice_again: Vec<u32> = (0..16).map(|_| again.random_range(1..=6)).collect();
                assert_eq!(dice, dice_again);
            }

            /// A multi-refill request equals the same bytes read one refill at a
            /// time (direct-to-caller path vs buffered path), from an unaligned
            /// starting point.
            #[test]
            fn bulk_fill_equals_small_fills() {
                let len = 7 * $refill + 5;
                let mut a = <$rng>::from_key(b"bulk");
                let mut b = <$rng>::from_key(b"bulk");
                let _ = a.next_u32();
                let _ = b.next_u32();
                let big = one_fill(&mut a, len);
                let mut small = Vec::new();
                while small.len() < len {
                    let n = (len - small.len()).min(100);
                    small.extend(one_fill(&mut b, n));
                }
                assert_eq!(big, small);
                assert_eq!(a.next_u64(), b.next_u64());
            }
        }
    };
}

generator_tests!(turboshake, TurboShakeRng, 1088);
generator_tests!(shake, ShakeRng, 1088);
generator_tests!(chacha8, ChaChaKeyErasureRng, 992);
generator_tests!(chacha12, ChaCha12KeyErasureRng, 992);
generator_tests!(chacha20, ChaCha20KeyErasureRng, 992);
generator_tests!(aes_ctr_pool, AesCtrPoolRng, 4064);
