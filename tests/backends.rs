//! Every generator on every backend this CPU has produces the stream of the
//! portable backend, through the public (`hazmat`) constructors: boundary lengths
//! around each refill size, multi-refill requests that bypass the buffer, and
//! several MiB. The per-primitive kernel tests live beside the kernels
//! (`src/keccak.rs`, `src/chacha.rs`, `src/aes.rs`); this one runs the
//! generators' own code paths on top of them.
#![cfg(feature = "hazmat")]

mod common;

use common::one_fill;
use ratchet_rng::hazmat::{Aes256, ChaCha, Keccak};
use ratchet_rng::rand_core::Rng;
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
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
fn lengths(refill: usize) -> Vec<usize> {
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

/// Compares every available backend's stream with soft's; returns the names run.
fn check<R: Rng>(
    names: impl Iterator<Item = &'static str>,
    refill: usize,
    make: impl Fn(&str) -> Option<R>,
) -> Vec<&'static str> {
    let want = read(
        make("soft").expect("soft is always available"),
        &lengths(refill),
    );
    let mut ran = Vec::new();
    for name in names {
        let rng = make(name).expect("an available backend constructs");
        assert!(
            read(rng, &lengths(refill)) == want,
            "backend {name} differs from soft"
        );
        ran.push(name);
    }
    ran
}

#[test]
fn sponge_generators_on_every_keccak_backend() {
    let names = || Keccak::available().map(Keccak::name);
    check(names(), 1088, |b| {
        TurboShakeRng::from_key_with_backend(b"k", b)
    });
    check(names(), 1088, |b| ShakeRng::from_key_with_backend(b"k", b));
}

#[test]
fn chacha_generators_on_every_chacha_backend() {
    let names = || ChaCha::available().map(ChaCha::name);
    check(names(), 992, |b| {
        ChaChaKeyErasureRng::from_key_with_backend(b"k", b)
    });
    check(names(), 992, |b| {
        ChaCha12KeyErasureRng::from_key_with_backend(b"k", b)
    });
    check(names(), 992, |b| {
        ChaCha20KeyErasureRng::from_key_with_backend(b"k", b)
    });
}

#[test]
fn aes_generator_on_every_aes_backend() {
    let names = Aes256::available().map(Aes256::name);
    check(names, 4064, |b| {
        AesCtrPoolRng::from_key_with_backend(b"k", b)
    });
}

#[test]
fn unknown_or_absent_backends_give_none() {
    assert!(TurboShakeRng::from_key_with_backend(b"k", "no_such").is_none());
    assert!(ChaChaKeyErasureRng::from_seed_with_backend([0; 32], "no_such").is_none());
    assert!(AesCtrPoolRng::from_seed_with_backend([0; 32], "no_such").is_none());
    // A backend of another architecture is never available.
    #[cfg(target_arch = "x86_64")]
    assert!(Keccak::by_name("aarch64_sha3").is_none());
    #[cfg(target_arch = "aarch64")]
    assert!(Keccak::by_name("x86_avx512").is_none());
}
