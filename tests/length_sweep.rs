//! Every public path that reaches a kernel, at every request length, into a
//! heap allocation of exactly the requested size at an odd offset: a write past
//! the end (or before the start) of the destination lands outside the
//! allocation, which AddressSanitizer reports (CI runs this file under ASan on
//! every x86 backend the CPU has; CONTRIBUTING.md, "How CI is laid out").
//! Without ASan the bytes are still compared, and the bytes before the
//! destination must keep their poison.
//!
//! The paths: `fill_bytes` of each generator on each backend (compared with
//! the same generator on `soft`), the `hazmat` primitives (`ctr_keystream`,
//! `fill_pools`, `key_periods`, `squeeze_period`; compared with `soft`), the
//! XOF readers (compared with one long squeeze) and the free functions
//! `fill` / `try_fill`. Lengths: with `RATCHET_RNG_LENGTH_SWEEP=all` every
//! length 0..=4200 (each at offset 1, 3, 5 or 7 in turn, each offset meeting
//! every length modulo 8); otherwise 0..=300 and every 37th length above, to
//! keep the run short under emulators.

#![cfg(feature = "hazmat")]

use ratchet_rng::hazmat::{Aes256, ChaCha, Keccak};
use ratchet_rng::rand_core::Rng;
use ratchet_rng::xof::{Shake256, TurboShake256};
use ratchet_rng::{
    AesCtrPoolRng, ChaCha12KeyErasureRng, ChaCha20KeyErasureRng, ChaChaKeyErasureRng, ShakeRng,
    TurboShakeRng,
};

/// The longest request (over four AES pools' output, over four ChaCha key
/// periods, about four sponge periods).
const MAX_LEN: usize = 4200;

/// The poison around a destination.
const POISON: u8 = 0xA5;

/// The lengths swept (see the module docs).
fn lengths() -> Vec<usize> {
    let all = std::env::var("RATCHET_RNG_LENGTH_SWEEP").is_ok_and(|v| v == "all");
    (0..=MAX_LEN)
        .filter(|&len| all || len <= 300 || len % 37 == 0 || len == MAX_LEN)
        .collect()
}

/// The odd offset of a destination of `len` elements: 1, 3, 5 or 7, changing
/// every 8 lengths, so each offset meets every length modulo 8.
fn offset(len: usize) -> usize {
    2 * ((len / 8) % 4) + 1
}

/// Runs `fill` on the last `len` elements of an allocation of exactly
/// `offset(len) + len` elements, poisoned; checks the elements before it kept
/// their poison and returns the destination's contents.
fn fill_exact<T: Copy + PartialEq + core::fmt::Debug>(
    len: usize,
    poison: T,
    fill: impl FnOnce(&mut [T]),
) -> Vec<T> {
    let off = offset(len);
    let mut buf = vec![poison; off + len].into_boxed_slice();
    fill(&mut buf[off..]);
    assert!(
        buf[..off].iter().all(|&b| b == poison),
        "length {len}: written before the destination"
    );
    buf[off..].to_vec()
}

/// `fill_bytes` at every length from generators built by `make` on each
/// backend, against one long `fill_bytes` of the generator on `soft`.
fn sweep_generator<B: Copy + core::fmt::Display, R: Rng>(
    what: &str,
    soft: B,
    backends: impl Iterator<Item = B>,
    make: impl Fn(B) -> R,
) {
    let lengths = lengths();
    let total = lengths.iter().sum();
    let mut want = vec![0u8; total];
    make(soft).fill_bytes(&mut want);
    for backend in backends {
        let mut rng = make(backend);
        let mut at = 0;
        for &len in &lengths {
            let got = fill_exact(len, POISON, |dst| rng.fill_bytes(dst));
            assert!(
                got[..] == want[at..at + len],
                "{what} on {backend}: length {len} at stream position {at}"
            );
            at += len;
        }
    }
}

#[test]
fn generators_fill_every_length() {
    let seed = [0x5Eu8; 32];
    sweep_generator("ChaCha8", ChaCha::soft(), ChaCha::available(), |b| {
        ChaChaKeyErasureRng::from_seed_with_backend(seed, b)
    });
    sweep_generator("ChaCha12", ChaCha::soft(), ChaCha::available(), |b| {
        ChaCha12KeyErasureRng::from_seed_with_backend(seed, b)
    });
    sweep_generator("ChaCha20", ChaCha::soft(), ChaCha::available(), |b| {
        ChaCha20KeyErasureRng::from_seed_with_backend(seed, b)
    });
    sweep_generator("AesCtrPool", Aes256::soft(), Aes256::available(), |b| {
        AesCtrPoolRng::from_seed_with_backend(seed, b)
    });
    sweep_generator("TurboShake", Keccak::soft(), Keccak::available(), |b| {
        TurboShakeRng::from_key_with_backend(b"sweep", b)
    });
    sweep_generator("Shake", Keccak::soft(), Keccak::available(), |b| {
        ShakeRng::from_key_with_backend(b"sweep", b)
    });
}

#[test]
fn aes_primitives_fill_every_length() {
    let key = [0x3Cu8; 32];
    // Blocks: every count up to MAX_LEN bytes' worth, across the counter's
    // wrap-around.
    let counter = u128::MAX - 100;
    let blocks = MAX_LEN / 16 + 1;
    let mut want = vec![[0u8; 16]; blocks];
    Aes256::soft().ctr_keystream(&key, counter, &mut want);
    for aes in Aes256::available() {
        for n in 0..=blocks {
            let got = fill_exact(n, [POISON; 16], |dst| aes.ctr_keystream(&key, counter, dst));
            assert!(got[..] == want[..n], "{aes}: ctr_keystream, {n} blocks");
        }
        for pools in 0..=2 {
            let (mut want_key, mut got_key) = (key, key);
            let mut want = vec![[0u8; 4064]; pools];
            Aes256::soft().fill_pools(&mut want_key, &mut want);
            let got = fill_exact(pools, [POISON; 4064], |dst| {
                aes.fill_pools(&mut got_key, dst)
            });
            assert!(
                got == want && got_key == want_key,
                "{aes}: fill_pools, {pools} pools"
            );
        }
    }
}

#[test]
fn chacha_and_keccak_primitives_fill_every_length() {
    for chacha in ChaCha::available() {
        for periods in 0..=5 {
            let (mut want_key, mut got_key) = ([7u32; 8], [7u32; 8]);
            let mut want = vec![[0u8; 992]; periods];
            ChaCha::soft().key_periods::<8>(&mut want_key, &mut want);
            let got = fill_exact(periods, [POISON; 992], |dst| {
                chacha.key_periods::<8>(&mut got_key, dst)
            });
            assert!(
                got == want && got_key == want_key,
                "{chacha}: {periods} periods"
            );
        }
    }
    for keccak in Keccak::available() {
        let (mut want_state, mut got_state) = ([9u64; 25], [9u64; 25]);
        let mut want = [0u8; 1088];
        Keccak::soft().squeeze_period::<12>(&mut want_state, &mut want);
        // An allocation of exactly one period.
        let mut got = Box::new([POISON; 1088]);
        keccak.squeeze_period::<12>(&mut got_state, &mut got);
        assert!(
            *got == want && got_state == want_state,
            "{keccak}: squeeze_period"
        );
    }
}

#[test]
fn xof_readers_squeeze_every_length() {
    let lengths = lengths();
    let total = lengths.iter().sum();
    let mut shake = Shake256::new();
    shake.absorb(b"sweep");
    let mut turbo = TurboShake256::new(0x1F).expect("a valid domain byte");
    turbo.absorb(b"sweep");
    let (mut want_shake, mut want_turbo) = (vec![0u8; total], vec![0u8; total]);
    shake.clone().finalize().squeeze(&mut want_shake);
    turbo.clone().finalize().squeeze(&mut want_turbo);
    let (mut shake, mut turbo) = (shake.finalize(), turbo.finalize());
    let mut at = 0;
    for &len in &lengths {
        let got = fill_exact(len, POISON, |dst| shake.squeeze(dst));
        assert!(
            got[..] == want_shake[at..at + len],
            "SHAKE256: length {len}"
        );
        let got = fill_exact(len, POISON, |dst| turbo.squeeze(dst));
        assert!(
            got[..] == want_turbo[at..at + len],
            "TurboSHAKE256: length {len}"
        );
        at += len;
    }
}

#[cfg(feature = "thread_rng")]
#[test]
fn free_functions_fill_every_length() {
    for len in lengths() {
        let got = fill_exact(len, POISON, ratchet_rng::fill);
        let tried = fill_exact(len, POISON, |dst| ratchet_rng::try_fill(dst).unwrap());
        // 32 random bytes are all zero or all equal with negligible probability.
        if len >= 32 {
            assert!(got.iter().any(|&b| b != got[0]), "fill: length {len}");
            assert!(
                tried.iter().any(|&b| b != tried[0]),
                "try_fill: length {len}"
            );
        }
    }
}
