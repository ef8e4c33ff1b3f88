//! Every generator on every backend this CPU has produces the stream of the
//! portable backend, through the public (`hazmat`) constructors: boundary lengths
//! around each refill size, multi-refill requests that bypass the buffer, and
//! several MiB. The per-primitive kernel tests live beside the kernels
//! (`src/keccak.rs`, `src/chacha.rs`, `src/aes.rs`); this one runs the
//! generators' own code paths on top of them.
#![cfg(feature = "hazmat")]

use crate::common;

use common::one_fill;
use ratchet_rng::hazmat::{Aes256, ChaCha, Keccak};
use ratchet_rng::rand_core::{Rng, SeedableRng};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    SpongeSeed, TurboShakeRng,
};

/// Reads `lengths` in order from a generator, concatenated.
fn read<R: Rng>(mut rng: R, lengths: &[usize]) -> Vec<u8> {
    let mut out = Vec::new();
    for &n in lengths {
        out.extend(one_fill(&mut rng, n));
    }
    out
}

/// Request lengths around a refill of `refill` bytes, then 3 MiB at once.
/// Under Miri (CI runs this file in a build with SIMD target features,
/// CONTRIBUTING.md "Miri") a few bytes of the first refill: the point there
/// is every backend's dispatch and kernel, not the buffer (whose own tests
/// Miri runs in the lib).
fn lengths(refill: usize) -> Vec<usize> {
    if cfg!(miri) {
        return vec![0, 1, 7, 3];
    }
    vec![
        0,
        1,
        refill - 1,
        refill,
        refill + 1,
        2 * refill - 1,
        7,
        5 * refill,
        3,
        3 << 20,
    ]
}

/// Compares the stream on every backend of `available` with the one on `soft`,
/// and `soft`'s with `public`'s (the same generator from the constructor
/// without a backend, `from_key` or `from_seed`: the `*_with_backend` forms
/// are code of their own); returns the names run.
fn check<B: Copy + core::fmt::Display, R: Rng>(
    soft: B,
    available: impl Iterator<Item = B>,
    refill: usize,
    public: R,
    make: impl Fn(B) -> R,
) -> Vec<String> {
    let want = read(make(soft), &lengths(refill));
    assert!(
        read(public, &lengths(refill)) == want,
        "soft differs from the constructor without a backend"
    );
    let mut ran = Vec::new();
    for backend in available {
        // `soft` itself was read above: the same code on the same input.
        let name = backend.to_string();
        assert!(
            name == soft.to_string() || read(make(backend), &lengths(refill)) == want,
            "backend {backend} differs from soft"
        );
        ran.push(name);
    }
    ran
}

/// Checks `$rng` on every backend of `$backend`, keyed (`from_key`) and seeded
/// (`from_seed`, with `$seed`).
macro_rules! check_both {
    ($rng:ty, $backend:ident, $refill:expr, $seed:expr) => {
        check(
            $backend::soft(),
            $backend::available(),
            $refill,
            <$rng>::from_key(b"k"),
            |b| <$rng>::from_key_with_backend(b"k", b),
        );
        check(
            $backend::soft(),
            $backend::available(),
            $refill,
            <$rng>::from_seed($seed),
            |b| <$rng>::from_seed_with_backend($seed, b),
        );
    };
}

#[test]
fn sponge_generators_on_every_keccak_backend() {
    let seed = || SpongeSeed::from([0x3C; 136]);
    check_both!(TurboShakeRng, Keccak, 1088, seed());
    check_both!(ShakeRng, Keccak, 1088, seed());
}

#[test]
fn chacha_generators_on_every_chacha_backend() {
    check_both!(ChaChaKeyErasureRng, ChaCha, 992, [0x3C; 32]);
    check_both!(ChaCha12KeyErasureRng, ChaCha, 992, [0x3C; 32]);
    check_both!(ChaCha20KeyErasureRng, ChaCha, 992, [0x3C; 32]);
}

#[test]
fn aes_generator_on_every_aes_backend() {
    check_both!(AesCtrPoolRng, Aes256, 4064, [0x3C; 32]);
}

/// The string edge: names of unknown or absent backends give `None`, and every
/// available backend's name finds it again.
#[test]
fn names_are_the_edge_unknown_or_absent_give_none() {
    for name in ["no_such", "", "SOFT", "x86_aesni "] {
        assert!(Keccak::by_name(name).is_none(), "{name:?}");
        assert!(ChaCha::by_name(name).is_none(), "{name:?}");
        assert!(Aes256::by_name(name).is_none(), "{name:?}");
    }
    // Another primitive's backend is not this one's.
    assert!(Keccak::by_name("x86_aesni").is_none());
    // A backend of another architecture is never available.
    #[cfg(target_arch = "x86_64")]
    assert!(Keccak::by_name("aarch64_sha3").is_none());
    #[cfg(target_arch = "aarch64")]
    assert!(Keccak::by_name("x86_avx512").is_none());
    for keccak in Keccak::available() {
        assert_eq!(Keccak::by_name(&keccak.to_string()), Some(keccak));
        assert!(Keccak::NAMES.contains(&keccak.name()));
    }
    for aes in Aes256::available() {
        assert_eq!(Aes256::by_name(aes.name()), Some(aes));
    }
}
