//! Properties of `ShakeRng` and `TurboShakeRng` through the public API:
//! byte-stream semantics (any sequence of `fill_bytes` / `next_u32` / `next_u64`
//! reads slices of one long `fill_bytes`, across ratchet boundaries), the first
//! ratchet period against an independent XOF (RustCrypto), and the constructors.

use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::RngExt;
use ratchet_rng::rand_core::{Rng, SeedableRng, TryRng};
use ratchet_rng::{ShakeRng, SpongeSeed, TurboShakeRng};
use shake::{ExtendableOutput, Update, XofReader};

/// Output bytes between two ratchets.
const PERIOD: usize = 1088;

#[derive(Clone, Debug)]
enum Op {
    Fill(usize),
    U32,
    U64,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        // Lengths around the rate (136), the period (1088) and several periods.
        (0usize..3 * PERIOD).prop_map(Op::Fill),
        prop::sample::select(vec![0usize, 1, 135, 136, 137, 1087, 1088, 1089, 2176, 5000])
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

fn one_fill<R: Rng>(rng: &mut R, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    rng.fill_bytes(&mut out);
    out
}

fn config() -> ProptestConfig {
    let cases = std::env::var("RATCHET_RNG_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig::with_cases(cases)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn turboshake_op_sequences_read_one_stream(
        key in proptest::collection::vec(any::<u8>(), 0..300),
        ops in proptest::collection::vec(op(), 0..24),
    ) {
        let got = run_ops(&mut TurboShakeRng::from_key(&key), &ops);
        let want = one_fill(&mut TurboShakeRng::from_key(&key), got.len());
        prop_assert_eq!(got, want);
    }

    #[test]
    fn shake_op_sequences_read_one_stream(
        key in proptest::collection::vec(any::<u8>(), 0..300),
        ops in proptest::collection::vec(op(), 0..24),
    ) {
        let got = run_ops(&mut ShakeRng::from_key(&key), &ops);
        let want = one_fill(&mut ShakeRng::from_key(&key), got.len());
        prop_assert_eq!(got, want);
    }

    /// The first ratchet period is the plain XOF output of the key, computed by an
    /// independent implementation.
    #[test]
    fn first_period_is_the_xof_output(key in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut want = vec![0u8; PERIOD];
        let mut h = shake::Shake256::default();
        h.update(&key);
        h.finalize_xof().read(&mut want);
        prop_assert_eq!(one_fill(&mut ShakeRng::from_key(&key), PERIOD), want);

        let mut want = vec![0u8; PERIOD];
        let mut h = turboshake::TurboShake256::default();
        h.update(&key);
        h.finalize_xof().read(&mut want);
        prop_assert_eq!(one_fill(&mut TurboShakeRng::from_key(&key), PERIOD), want);
    }
}

/// After the first period the stream is *not* the XOF's continuation: the ratchet
/// changed the state.
#[test]
fn ratchet_departs_from_the_plain_xof() {
    let mut plain = vec![0u8; 2 * PERIOD];
    let mut h = turboshake::TurboShake256::default();
    h.update(b"key");
    h.finalize_xof().read(&mut plain);
    let ours = one_fill(&mut TurboShakeRng::from_key(b"key"), 2 * PERIOD);
    assert_eq!(ours[..PERIOD], plain[..PERIOD]);
    assert_ne!(ours[PERIOD..PERIOD + 32], plain[PERIOD..PERIOD + 32]);
}

#[test]
fn zero_length_fill_is_a_no_op() {
    let mut a = TurboShakeRng::from_key(b"k");
    let mut b = TurboShakeRng::from_key(b"k");
    a.fill_bytes(&mut []);
    a.try_fill_bytes(&mut []).unwrap();
    assert_eq!(a.next_u64(), b.next_u64());
}

#[test]
fn seeding_constructors_are_deterministic_and_distinct() {
    let first = |mut r: TurboShakeRng| r.next_u64();
    assert_eq!(
        first(TurboShakeRng::seed_from_u64(42)),
        first(TurboShakeRng::seed_from_u64(42))
    );
    assert_ne!(
        first(TurboShakeRng::seed_from_u64(42)),
        first(TurboShakeRng::seed_from_u64(43))
    );
    // from_rng reads 136 bytes of the parent as the seed.
    let mut parent = ShakeRng::from_key(b"parent");
    let mut seed = SpongeSeed::default();
    ShakeRng::from_key(b"parent").fill_bytes(seed.as_mut());
    assert_eq!(
        first(TurboShakeRng::from_rng(&mut parent)),
        first(TurboShakeRng::from_seed(seed.clone()))
    );
    let mut parent = ShakeRng::from_key(b"parent");
    let child = TurboShakeRng::try_from_rng(&mut parent).unwrap();
    assert_eq!(first(child), first(TurboShakeRng::from_seed(seed)));
    // Different keys, different streams; the empty key is a valid (public) stream.
    assert_ne!(
        first(TurboShakeRng::from_key(b"")),
        first(TurboShakeRng::from_key(b"\0"))
    );
}

#[test]
fn os_seeded_generators_differ() {
    let mut a = TurboShakeRng::from_os_rng();
    let mut b = TurboShakeRng::try_from_os_rng().expect("OS RNG");
    assert_ne!(one_fill(&mut a, 32), one_fill(&mut b, 32));
    let mut c = ShakeRng::from_os_rng();
    let mut d = ShakeRng::try_from_os_rng().expect("OS RNG");
    assert_ne!(one_fill(&mut c, 32), one_fill(&mut d, 32));
}

#[test]
fn spongeseed_conversions() {
    let bytes: [u8; 136] = core::array::from_fn(|i| i as u8);
    let mut seed = SpongeSeed::from(bytes);
    assert_eq!(seed.as_ref(), &bytes[..]);
    seed.as_mut()[0] = 0xff;
    assert_eq!(seed.as_ref()[0], 0xff);
    assert!(SpongeSeed::default().as_ref().iter().all(|&b| b == 0));
    assert_eq!(format!("{seed:?}"), "SpongeSeed { .. }");
}

/// The generators drive `rand` 0.10 (`Rng` + `CryptoRng`), with known answers so a
/// change of stream or of rand's sampling is noticed.
#[test]
fn works_with_rand_0_10() {
    fn assert_crypto<R: rand_core::CryptoRng>(_: &R) {}
    let mut rng = TurboShakeRng::from_key(b"rand");
    assert_crypto(&rng);
    let dice: Vec<u32> = (0..8).map(|_| rng.random_range(1..=6)).collect();
    assert!(dice.iter().all(|d| (1..=6).contains(d)));
    let x: f64 = rng.random();
    assert!((0.0..1.0).contains(&x));
    let mut v: Vec<u32> = (0..10).collect();
    v.shuffle(&mut rng);
    let mut sorted = v.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..10).collect::<Vec<_>>());
    // Same key, same samples.
    let mut again = TurboShakeRng::from_key(b"rand");
    let dice_again: Vec<u32> = (0..8).map(|_| again.random_range(1..=6)).collect();
    assert_eq!(dice, dice_again);
    let _ = rng.next_u32(); // `rand::Rng` is also usable through `rand_core::Rng`
}
