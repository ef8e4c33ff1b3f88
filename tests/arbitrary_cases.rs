//! The `arbitrary` feature (issue 47): every seeded generator is `Arbitrary`,
//! `from_seed` of the input's next seed-sized bytes, zero-padded where the input
//! runs out (docs/STREAMS.md, "Fuzz cases"); a derived fuzz case with generator
//! fields is deterministic, and its `size_hint` is exact.
#![cfg(feature = "arbitrary")]

use crate::common;

use arbitrary::{Arbitrary, Unstructured};
use common::one_fill;
use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

/// The fuzz case.
#[derive(Debug, Arbitrary)]
struct Case {
    rng: ChaChaKeyErasureRng,
    n: u8,
}

/// A case with a generator of each seed size and data after them.
#[derive(Debug, Arbitrary)]
struct Mixed {
    sponge: TurboShakeRng,
    aes: AesCtrPoolRng,
    tail: u32,
}

/// The input of the tests: bytes 0, 1, 2, ... (mod 251, so no period of 256).
fn input(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

#[test]
fn a_derived_case_is_deterministic() {
    let data = input(100);
    let mut a = Case::arbitrary(&mut Unstructured::new(&data)).unwrap();
    let mut b = Case::arbitrary(&mut Unstructured::new(&data)).unwrap();
    assert_eq!(a.n, b.n);
    assert_eq!(one_fill(&mut a.rng, 2000), one_fill(&mut b.rng, 2000));

    // The generator is `from_seed` of the first 32 bytes; the next field reads on.
    let mut c = Case::arbitrary(&mut Unstructured::new(&data)).unwrap();
    let seed: [u8; 32] = data[..32].try_into().unwrap();
    assert_eq!(c.n, data[32]);
    let mut want = ChaChaKeyErasureRng::from_seed(seed);
    assert_eq!(one_fill(&mut c.rng, 64), one_fill(&mut want, 64));

    // Another input, another stream.
    let other = input(101)[1..].to_vec();
    let mut d = Case::arbitrary(&mut Unstructured::new(&other)).unwrap();
    let mut e = Case::arbitrary(&mut Unstructured::new(&data)).unwrap();
    assert_ne!(d.rng.next_u64(), e.rng.next_u64());

    // The fuzzer's entry point (`fuzz_target!(|case: Case| ...)` calls it).
    let mut f = Case::arbitrary_take_rest(Unstructured::new(&data)).unwrap();
    let mut g = Case::arbitrary(&mut Unstructured::new(&data)).unwrap();
    assert_eq!(f.rng.next_u64(), g.rng.next_u64());
}

#[test]
fn fields_take_their_seeds_in_order() {
    let data = input(136 + 32 + 4);
    let mut case = Mixed::arbitrary(&mut Unstructured::new(&data)).unwrap();
    let sponge_seed: [u8; 136] = data[..136].try_into().unwrap();
    let aes_seed: [u8; 32] = data[136..168].try_into().unwrap();
    assert_eq!(
        one_fill(&mut case.sponge, 100),
        one_fill(&mut TurboShakeRng::from_seed(sponge_seed.into()), 100)
    );
    assert_eq!(
        case.aes.next_u64(),
        AesCtrPoolRng::from_seed(aes_seed).next_u64()
    );
    assert_eq!(
        case.tail,
        u32::from_le_bytes(data[168..172].try_into().unwrap())
    );
}

/// A short input still gives a generator: the bytes there, then zeros.
#[test]
fn a_short_input_is_zero_padded() {
    for len in [0, 1, 31] {
        let data = input(len);
        let mut u = Unstructured::new(&data);
        let mut got = ChaCha20KeyErasureRng::arbitrary(&mut u).unwrap();
        assert!(u.is_empty());
        let mut seed = [0u8; 32];
        seed[..len].copy_from_slice(&data);
        assert_eq!(
            one_fill(&mut got, 64),
            one_fill(&mut ChaCha20KeyErasureRng::from_seed(seed), 64),
            "{len} bytes"
        );
    }
    let data = input(135);
    let mut got = ShakeRng::arbitrary(&mut Unstructured::new(&data)).unwrap();
    let mut seed = [0u8; 136];
    seed[..135].copy_from_slice(&data);
    assert_eq!(got.next_u64(), ShakeRng::from_seed(seed.into()).next_u64());
    // An empty input: the zero seed, and the other fields' defaults.
    let mut case = Case::arbitrary(&mut Unstructured::new(&[])).unwrap();
    assert_eq!(case.n, 0);
    assert_eq!(
        case.rng.next_u64(),
        ChaChaKeyErasureRng::from_seed([0; 32]).next_u64()
    );
}

/// `size_hint` (and `try_size_hint`) is the seed length, exactly; a derived
/// struct adds its fields' hints.
#[test]
fn size_hints_are_the_seed_lengths() {
    fn exact<T: for<'a> Arbitrary<'a>>(n: usize) {
        assert_eq!(T::size_hint(0), (n, Some(n)));
        assert_eq!(T::try_size_hint(0).unwrap(), (n, Some(n)));
        // Exactly `n` bytes are consumed from a longer input.
        let data = input(n + 10);
        let mut u = Unstructured::new(&data);
        let _ = T::arbitrary(&mut u).unwrap();
        assert_eq!(u.len(), 10);
    }
    exact::<TurboShakeRng>(136);
    exact::<ShakeRng>(136);
    exact::<ChaChaKeyErasureRng>(32);
    exact::<ChaCha12KeyErasureRng>(32);
    exact::<ChaCha20KeyErasureRng>(32);
    exact::<AesCtrPoolRng>(32);
    assert_eq!(Case::size_hint(0), (33, Some(33)));
    assert_eq!(Mixed::try_size_hint(0).unwrap(), (172, Some(172)));
}
